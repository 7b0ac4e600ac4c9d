"""What a query says exactly — the first stage of a search: its identifiers (functions, classes, options, quoted
names), the exception types it names and the mechanisms of the taxonomy it points at. Cards carry the same
signals (tags.identifiers, tags.exceptions, tags.mechanisms); search matches them exactly."""

from __future__ import annotations

from sentinel.record import Record, factory


class QuerySignals(Record):
    """What a query says exactly: identifiers, exception types and the mechanisms it points at."""

    identifiers: list[str] = factory(list)
    exceptions: list[str] = factory(list)
    mechanisms: list[str] = factory(list)
    # Where the query is known to be about (a failing finding's place, sentinel.memory.retrieval.site): files as the
    # index's facets spell them, and "path::Qualname" symbols, innermost definition first.
    files: list[str] = factory(list)
    symbols: list[str] = factory(list)

    def to_json(self) -> dict:
        out = {"identifiers": self.identifiers, "exceptions": self.exceptions, "mechanisms": self.mechanisms}
        if self.files or self.symbols:
            out.update(files=self.files, symbols=self.symbols)
        return out


def query_signals(text: str, extra_identifiers: list[str] | None = None,
                  exceptions: list[str] | None = None) -> QuerySignals:
    from sentinel.memory.cards import identifiers, taxonomy

    excs = list(dict.fromkeys([*(exceptions or []), *identifiers.exception_names(text)]))
    idents = identifiers.from_text(text) + list(extra_identifiers or [])
    # an exception name is an exception signal, not an identifier signal
    exc_low = {e.lower() for e in excs}
    idents = [i for i in identifiers.normalise(idents) if i not in exc_low]
    mechs = taxonomy.infer(text, exceptions=excs, limit=3)
    return QuerySignals(identifiers=idents[:20], exceptions=excs[:6], mechanisms=mechs)
