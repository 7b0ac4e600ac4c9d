"""`sentinel ci` on pull requests, as a reviewer and an attacker see it: inline review comments kept in
step with every push, links to the head commit and the rule docs, a green PR left alone, only our
own comments edited, PR text made inert, and a PR that rewrites the gate's configuration judged by
the base branch's. Real git, real PyGithub, the loopback GitHub of tests/github_fake.py."""

from __future__ import annotations

import html
import re

import pytest

from sentinel.ci.github_api import MARKER
from tests.conftest import GitRepo
from tests.github_fake import FakeGitHub
from tests.test_ci import CONFIG, _run_ci

BAD = "import os\nos.system('rm -rf /tmp/build1')\nos.system('rm -rf /tmp/build2')\n"


def _patches(repo: GitRepo, base: str, head: str) -> list[dict]:
    """The PR's files as GitHub's pulls/{n}/files lists them (patch = the hunks of `git diff base...head`)."""
    out = []
    names = repo.git("diff", "--name-status", f"{base}...{head}").split("\n")
    for row in filter(None, names):
        status, path = row.split("\t")[0], row.split("\t")[-1]
        text = repo.git("diff", f"{base}...{head}", "--", path)
        patch = text[text.index("@@"):] if "@@" in text else ""
        out.append({"sha": "0" * 40, "filename": path, "patch": patch.rstrip("\n"),
                    "status": {"A": "added", "M": "modified", "D": "removed"}.get(status[0], "modified"),
                    "additions": 1, "deletions": 0, "changes": 1})
    return out


class PR:
    """A pull request on the loopback GitHub backed by a real repository; push() moves its head."""

    def __init__(self, tmp_path, gh: FakeGitHub, base_config: str = CONFIG, body: str = "Fixes #12"):
        self.tmp, self.gh = tmp_path, gh
        self.repo = GitRepo(tmp_path / "repo")
        self.repo.write(".sentinel.toml", base_config)
        self.repo.write("app.py", "print('hello')\n")
        self.repo.add(".sentinel.toml", "app.py")
        self.base = self.repo.commit("base")
        self.repo.git("checkout", "-q", "-b", "feature")
        gh.add_issue(12, "Clean up build directories", "Remove stale build directories on start.")
        self.body = body
        self.head = None

    def push(self, files: dict[str, str], message: str = "change") -> str:
        for path, text in files.items():
            self.repo.write(path, text)
            self.repo.add(path)
        self.head = self.repo.commit(message)
        if 7 in self.gh.pulls:
            self.gh.pulls[7]["head"]["sha"] = self.head
            self.gh.pull_files[7] = _patches(self.repo, self.base, self.head)
        else:
            self.gh.add_pull(7, "Clean up build dirs", self.body, self.base, self.head,
                             files=_patches(self.repo, self.base, self.head))
        return self.head

    def run(self, **kw):
        return _run_ci(self.repo, self.gh, self.tmp, self.gh.event_payload(7), **kw)


@pytest.fixture
def gh(installed_sentinel):  # `sentinel ci` runs from a non-editable install (tests/test_ci.py: _run_ci)
    with FakeGitHub(page_size=3) as fake:
        yield fake


def _ours(gh) -> list[dict]:
    return [c for c in gh.all_comments() if MARKER in c["body"]]


def _reviews(gh) -> list[tuple[str, str]]:
    return [(m, p) for m, p in gh.requests if m == "POST" and p.endswith("/pulls/7/reviews")]


def test_inline_comments_one_review_per_push_updated_not_duplicated(tmp_path, gh):
    pr = PR(tmp_path, gh)
    pr.push({"app.py": "print('hello')\n" + BAD})
    first = pr.run()
    assert first.returncode == 1, first.stderr
    inline = gh.review_comments[7]
    assert len(_reviews(gh)) == 1 and len(inline) == 2  # one review carrying both findings
    assert {(c["path"], c["line"]) for c in inline} == {("app.py", 3), ("app.py", 4)}
    assert all("SEN104" in c["body"] and "docs/rules.md#sen104" in c["body"] for c in inline)

    pr.run()  # the same head again (a re-run): nothing new, nothing duplicated
    assert len(_reviews(gh)) == 1 and len(gh.review_comments[7]) == 2

    # a push that fixes one and moves the other down two lines
    pr.push({"app.py": "print('hello')\n# cleanup\n\nimport os\nos.system('rm -rf /tmp/build2')\n"}, "fix one")
    pr.run()
    bodies = {c["line"]: c["body"] for c in gh.review_comments[7]}
    resolved = [b for b in bodies.values() if "Resolved at" in b]
    assert len(resolved) == 1 and pr.head[:7] in resolved[0] and "~~" in resolved[0]
    assert len(_reviews(gh)) == 2  # the moved finding is re-posted on its new line, in one new review
    assert any(line == 5 and "Resolved" not in body for line, body in bodies.items())


def test_review_comments_are_capped_and_green_prs_get_none(tmp_path, gh):
    pr = PR(tmp_path, gh)
    many = "import os\n" + "".join(f"os.system('rm -rf /tmp/b{i}')\n" for i in range(8))
    pr.push({"app.py": "print('hello')\n" + many})
    out = pr.run(inputs={"INPUT_REVIEW_COMMENTS": "3"})
    assert len(gh.review_comments[7]) == 3
    assert "5 more are in the summary comment" in gh.reviews[7][0]["body"]
    assert "3 inline comment(s) posted in one review" in out.summary


def test_green_pr_gets_no_comment_until_it_had_one(tmp_path, gh):
    pr = PR(tmp_path, gh)
    pr.push({"app.py": "print('hello')\nprint('clean')\n"})
    green = pr.run()
    assert green.returncode == 0, green.stdout + green.stderr
    assert _ours(gh) == [] and 7 not in gh.reviews
    assert "comment: none (the pull request is green" in green.summary and green.outputs["comment-url"] == ""

    pr.push({"app.py": "print('hello')\n" + BAD}, "oops")
    assert pr.run().returncode == 1 and len(_ours(gh)) == 1
    pr.push({"app.py": "print('hello')\nprint('clean')\n"}, "fixed")
    again = pr.run()
    assert again.returncode == 0
    ours = _ours(gh)
    assert len(ours) == 1 and "all clear (the previous run failed)" in ours[0]["body"]
    assert f"<code>{pr.head[:7]}</code>" in ours[0]["body"] and pr.head[:8] not in ours[0]["body"]
    assert all("Resolved at" in c["body"] for c in gh.review_comments[7])


def test_comment_links_lines_at_head_rules_and_names_sources(tmp_path, gh):
    pr = PR(tmp_path, gh, base_config=CONFIG.replace("[claims]\nenabled = false\n", ""),
            body="Fixes #12\n\nAll tests pass.")
    pr.push({"app.py": "print('hello')\n" + BAD})
    pr.run()
    body = _ours(gh)[0]["body"]
    assert f"(https://github.com/octo/demo/blob/{pr.head}/app.py#L3)" in body
    assert "[SEN104](https://" in body and "docs/rules.md#sen104)" in body
    assert f"commit <code>{pr.head[:7]}</code>" in body
    assert "task from linked issue #12" in body and "claims read from the PR description" in body
    assert "the PR description" in body and "COMMIT_MSG" not in body


def test_a_human_comment_with_the_marker_is_never_overwritten(tmp_path, gh):
    pr = PR(tmp_path, gh)
    pr.push({"app.py": "print('hello')\n" + BAD})
    forged = gh.add_comment(7, f"{MARKER}\nI copied the bot's marker", login="mallory")
    pr.run()
    assert forged["body"] == f"{MARKER}\nI copied the bot's marker"  # untouched
    bots = [c for c in _ours(gh) if c["user"]["login"] == "github-actions[bot]"]
    assert len(bots) == 1 and ("PATCH", f"/repos/octo/demo/issues/comments/{forged['id']}") not in gh.requests
    pr.run()
    assert len([c for c in _ours(gh) if c["user"]["login"] == "github-actions[bot]"]) == 1


def test_a_personal_token_edits_only_its_own_comments(tmp_path, gh):
    gh.user_login = "sentinel-bot"  # GET /user answers for a personal access token
    pr = PR(tmp_path, gh)
    pr.push({"app.py": "print('hello')\n" + BAD})
    other_bot = gh.add_comment(7, f"{MARKER}\nanother bot's report", login="github-actions[bot]", bot=True)
    pr.run()
    mine = [c for c in _ours(gh) if c["user"]["login"] == "sentinel-bot"]
    assert len(mine) == 1 and other_bot["body"].endswith("another bot's report")


def test_pr_text_is_inert_in_the_comment(tmp_path, gh):
    body = "Fixes #12\n\nAll tests pass, see https://evil.example/x and www.evil.example; cc @everyone #1"
    pr = PR(tmp_path, gh, base_config=CONFIG.replace("[claims]\nenabled = false\n", ""), body=body)
    pr.push({"app.py": "print('hello')\n" + BAD})
    pr.run()
    text = _ours(gh)[0]["body"]
    assert "SEN601" in text  # the claim, quoted from the PR body
    from tests.gfm import render as gfm
    page = gfm(text)
    assert "evil.example" in page.text  # shown, as text
    assert not [u for u in page.links if "evil" in u], page.links  # not auto-linked
    # GitHub links and notifies nothing inside code spans; everywhere else the text must not do it either
    assert "https://evil" not in page.prose and "www.evil" not in page.prose
    assert "@everyone" not in page.prose and not re.search(r"#1\b", page.prose)


def test_escape_breaks_links_mentions_and_issue_references():
    from sentinel.report.markdown import escape

    out = escape("see https://evil.example/x, HTTP://E.X, www.evil.example, a@b.example, @team, #12, o/r#3, GH-4")
    for raw in ("https://", "HTTP://", "www.", "@b", "@team", "#12", "#3", "GH-4"):
        assert raw not in out, raw
    assert "evil.example" in out and out.count("\u200b") >= 6


# -- hostile configuration changes ----------------------------------------------------------------

LOOSE = CONFIG.replace('[severity]\nSEN104 = "error"', '[severity]\nSEN104 = "off"\nSEN103 = "off"')


def test_a_pr_that_switches_rules_off_is_judged_by_the_base_config(tmp_path, gh):
    pr = PR(tmp_path, gh)
    pr.push({".sentinel.toml": LOOSE, "app.py": "print('hello')\n" + BAD})
    out = pr.run(inputs={"INPUT_SARIF": "s.sarif"})
    assert out.returncode == 1, out.stdout + out.stderr  # SEN104 still an error: the base config applies
    summary = html.unescape(out.summary)
    assert "the base branch's configuration applies" in summary
    assert "SEN104" in summary and "SEN801" in summary
    assert 'severity.SEN104: "error" -> "off" loosens the gate' in summary
    comment = _ours(gh)[0]["body"]
    assert "SEN801" in comment and ".sentinel.toml" in comment


def test_pull_request_target_reads_base_config_from_the_checkout_and_the_change_from_the_api(tmp_path, gh):
    pr = PR(tmp_path, gh)
    pr.push({".sentinel.toml": LOOSE, "app.py": "print('hello')\n" + BAD})
    pr.repo.git("checkout", "-q", "main")  # pull_request_target checks out the base branch
    out = pr.run(event_name="pull_request_target")
    assert out.returncode == 1, out.stdout + out.stderr
    summary = html.unescape(out.summary)
    assert "the base branch's configuration applies" in summary
    assert 'severity.SEN104: "error" -> "off" loosens' in summary


def test_without_git_history_the_base_config_comes_from_the_api(tmp_path, gh):
    pr = PR(tmp_path, gh)
    pr.push({".sentinel.toml": LOOSE, "app.py": "print('hello')\n" + BAD})
    base = "e" * 40  # neither commit is in the checkout: the diff and the base config come from the API
    gh.contents[(base, ".sentinel.toml")] = CONFIG.encode()
    event = gh.event_payload(7)
    event["pull_request"]["base"]["sha"] = base
    event["pull_request"]["head"]["sha"] = "f" * 40
    gh.pulls[7]["head"]["sha"] = "f" * 40
    out = _run_ci(pr.repo, gh, tmp_path, event)
    summary = html.unescape(out.summary)
    assert "read through the API" in summary and "SEN801" in summary
    assert 'severity.SEN104: "error" -> "off" loosens' in summary
    assert out.returncode == 1 and "SEN104" in summary


def test_a_pr_whose_config_does_not_load_is_judged_by_the_base_config(tmp_path, gh):
    pr = PR(tmp_path, gh)
    pr.push({".sentinel.toml": CONFIG + "\nno-such-key = 1\n", "app.py": "print('hello')\n" + BAD})
    out = pr.run()
    summary = html.unescape(out.summary)
    assert out.returncode == 1 and "SEN104" in summary  # not an error exit: the base config judges
    assert "SEN801" in summary and "does not load" in summary and "no-such-key" in summary


def test_pull_request_target_reads_the_prs_files_as_the_base_checkout_plus_the_diff(tmp_path):
    from sentinel.ci.github_api import file_section
    from sentinel.ci.run import PatchedChange
    from sentinel.diffparse import parse_diff

    repo = GitRepo(tmp_path / "r")
    base_text = "".join(f"line {i}\n" for i in range(1, 40))
    repo.write("app.py", base_text)
    repo.write("gone.py", "x = 1\n")
    repo.add("app.py", "gone.py")
    base = repo.commit("base")
    head_text = base_text.replace("line 20\n", "changed 20\nadded 20b\n").replace("line 3\n", "")
    repo.write("app.py", head_text)
    repo.write("new.py", "y = 2\n")
    repo.git("rm", "-q", "gone.py")
    repo.add("app.py", "new.py")
    head = repo.commit("head")
    files = _patches(repo, base, head)
    diff = "".join(file_section(f["filename"], f["status"], f["patch"]) for f in files)
    repo.git("checkout", "-q", base)  # what pull_request_target has on disk
    cs = parse_diff(diff, "api")
    cs.root = str(repo.path)
    got = PatchedChange(cs, content_rev=None, base_checkout=True).read(["app.py", "new.py", "gone.py"])
    assert got == {"app.py": head_text.encode(), "new.py": b"y = 2\n", "gone.py": None}


# -- what a reviewer reads: order, short SHAs, silencing, one redacted form everywhere ----------------------------

TOKEN_LINE = 'GITHUB_TOKEN = "ghp_' + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + '"\n'
SHOWN = 'GITHUB_TOKEN = "ghp_***"'  # how the terminal prints the redacted line


def test_the_comment_reads_code_first_with_short_shas_and_how_to_silence(tmp_path, gh):
    from tests.gfm import render as gfm

    body = "All tests pass and this is production ready."
    pr = PR(tmp_path, gh, base_config=CONFIG.replace("[claims]\nenabled = false\n", ""), body=body)
    pr.push({"app.py": "print('hello')\n" + BAD})
    out = pr.run()
    assert out.returncode == 1, out.stderr
    text = _ours(gh)[0]["body"]
    page = gfm(text)
    assert text.index("`app.py`") < text.index("the PR description")  # code findings before the claims
    assert pr.head not in page.text and pr.base not in page.text  # no SHA in full ...
    assert pr.head[:7] in page.text and pr.base[:7] in page.text  # ... but as GitHub shows them, linked
    assert f"https://github.com/octo/demo/commit/{pr.head}" in page.links
    silence = next(line for line in text.splitlines() if "To silence a finding" in line)
    assert "`# sentinel: ignore[SEN104]`" in silence and '`SEN104 = "off"`' in silence  # the real code
    assert "`" not in page.text  # every backtick of a message renders as code, none shows literally
    for c in gh.review_comments[7]:
        assert "To silence it: `# sentinel: ignore[SEN104]` on this line." in c["body"]


def test_a_redacted_line_reads_the_same_in_every_output(tmp_path, gh):
    import json

    from tests.gfm import render as gfm

    pr = PR(tmp_path, gh, base_config=CONFIG.replace("[chaos]\nenabled = false\n", ""))
    pr.push({"app.py": "print('hello')\n" + TOKEN_LINE + BAD})
    out = pr.run(inputs={"INPUT_SARIF": "s.sarif"})
    assert out.returncode == 1, out.stderr
    secret = TOKEN_LINE.split('"')[1]
    comment = _ours(gh)[0]["body"]
    [inline] = [c["body"] for c in gh.review_comments[7] if "SEN304" in c["body"]]
    sarif = json.loads((pr.repo.path / "s.sarif").read_text())
    terminal = pr.repo.sentinel("check", "--range", f"{pr.base}..{pr.head}", "--no-memory").stdout
    every = {"PR comment": gfm(comment).code, "inline review comment": gfm(inline).code,
             "job summary": gfm(out.summary).code,
             "SARIF": [r["locations"][0]["physicalLocation"]["region"]["snippet"]["text"]
                       for r in sarif["runs"][0]["results"] if r["ruleId"] == "SEN304"],
             "terminal": [ln.strip().removeprefix("| ") for ln in terminal.splitlines() if "GITHUB_TOKEN" in ln]}
    for where, shown in every.items():
        assert SHOWN in shown, (where, shown)
    for where in (comment, inline, out.summary, json.dumps(sarif), terminal, out.stdout + out.stderr):
        assert secret not in where and secret[4:20] not in where


def test_a_body_is_masked_only_where_a_reader_would_see_a_secret():
    """The last redaction reads what GitHub shows: escaped text is not masked again (that garbled it), a secret
    the escaping hid from a plain search is still caught, and one masking cannot remove is never posted."""
    from sentinel.ci.github_api import ApiProblem, _postable

    rendered = '`GITHUB_TOKEN = "ghp_***"` and &#96;x&#96; password &#61; &quot;S3***&quot;'
    assert _postable(rendered) == rendered  # nothing a reader sees is a secret: posted as rendered
    leaked = "`" + TOKEN_LINE.strip() + "`"
    assert "ghp_***" in _postable(leaked) and TOKEN_LINE.split('"')[1] not in _postable(leaked)
    key = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert key not in _postable(f"token ghp&#95;{key}")  # a reader sees ghp_...: masked
    with pytest.raises(ApiProblem, match="would show a secret"):
        _postable(f"see ghp&#95;{key}")  # masking the Markdown cannot reach it: not posted
