"""Intent checks' shared parts: what the change was asked to do (task), what the change is (digest),
what its author says about it (claims) and the evidence that can back those words (evidence)."""

from sentinel.lazyre import LazyPattern as lazy_re  # noqa: F401 - the package's shared lazy regex
