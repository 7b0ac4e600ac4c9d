"""The one redaction path (sentinel.redact): one catalogue for detection and redaction, so whatever the
chaos check reports as a secret is masked by every output, and the store's database URLs go the same way."""

from __future__ import annotations

import random
import string

import pytest

from sentinel import redact as R
from sentinel.checks import secrets as S

_rng = random.Random(11)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


# One real-looking sample per row of the catalogue (random, not a placeholder).
SAMPLES = {
    "AWS access key id": "AKIA" + _pick(UPPER_DIGITS, 16),
    "GitHub token": "ghp_" + _pick(ALNUM, 36),
    "GitHub fine-grained token": "github_pat_" + _pick(ALNUM + "_", 82),
    "Slack token": f"xoxb-{_pick(string.digits, 12)}-{_pick(string.digits, 13)}-{_pick(ALNUM, 24)}",
    "Google API key": "AIza" + _pick(ALNUM + "_-", 35),
    "Stripe live secret key": "sk_live_" + _pick(ALNUM, 24),
    "Anthropic API key": "sk-ant-api03-" + _pick(ALNUM + "_-", 93),
    "OpenAI API key": "sk-proj-" + _pick(ALNUM, 24) + "T3BlbkFJ" + _pick(ALNUM, 24),
    "GitLab token": "glpat-" + _pick(ALNUM, 20),
    "npm token": "npm_" + _pick(ALNUM, 36),
    "PyPI token": "pypi-AgEIcHlwaS5vcmc" + _pick(ALNUM + "_-", 60),
    "Hugging Face token": "hf_" + _pick(string.ascii_letters, 34),
    "SendGrid API key": f"SG.{_pick(ALNUM, 22)}.{_pick(ALNUM, 43)}",
    "Slack webhook URL": f"https://hooks.slack.com/services/T{_pick(UPPER_DIGITS, 8)}/B{_pick(UPPER_DIGITS, 8)}/"
                         + _pick(ALNUM, 24),
    "Shopify access token": "shpat_" + _pick(HEX, 32),
    "DigitalOcean token": "dop_v1_" + _pick(HEX, 64),
    "age secret key": "AGE-SECRET-KEY-1" + _pick(UPPER_DIGITS, 58),
    "JSON Web Token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
                      "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
}


def test_detection_and_redaction_share_one_catalogue():
    assert S.TOKEN_FORMATS is R.TOKEN_FORMATS and S.URL_CREDENTIALS is R.URL_CREDENTIALS
    assert S.AWS_SECRET_KEY is R.AWS_SECRET_KEY and S.classify_name is R.classify_name
    # Every row has a sample here: a new format cannot be added without being tested both ways.
    assert {kind for kind, _, _ in R.TOKEN_FORMATS} == set(SAMPLES)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_every_format_the_check_reports_is_masked_by_every_output(kind):
    token = SAMPLES[kind]
    for line in (f'client = connect("{token}")', f"curl -H 'X-Key: {token}' https://api", f"see {token}."):
        found = [(line[s:e], k) for s, e, k in S.find_tokens(line)]
        assert (token, kind) in found, (line, found)
        out = R.redact(line)
        assert token not in out and "***" in out, out
        assert R.redact(out) == out  # idempotent: masking twice changes nothing


URL_LINES = [
    "DATABASE_URL=postgres://app:Zq7-s3cret-81@db.internal:5432/prod",
    '    "url": "mysql+pymysql://svc:K9f!x2mQ@10.0.4.2/shop",',
    "--extra-index-url https://deploy:gl9Xk2mQ7vR4@pypi.corp.example.org/simple",
]


@pytest.mark.parametrize("line", URL_LINES)
def test_url_credentials_anywhere_in_a_line_are_found_and_masked(line):
    spans = list(S.find_url_credentials(line))
    assert len(spans) == 1
    password = line[spans[0][0]:spans[0][1]]
    assert password not in R.redact(line)


def test_aws_secret_keys_are_found_and_masked_on_a_line_that_names_them():
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Q3RZ7XW2MP"
    for line in (f"aws_secret_access_key = {key}", f'AWS_SECRET="{key}"', f"export AWS_SECRET_ACCESS_KEY={key}"):
        span = S.find_aws_secret(line)
        assert span is not None and line[span[0]:span[1]] == key
        assert key not in R.redact(line), R.redact(line)
    # The same 40 characters on a line that does not name AWS are any base64 run: left to entropy.
    assert S.find_aws_secret(f"digest = {key}") is None


def test_database_urls_go_through_the_one_path():
    from sentinel.memory.store import dburl

    assert dburl.redact_url is R.redact_url
    url = "postgresql://team:pa55-Word!@db.internal:5432/sentinel?sslmode=require&sslpassword=Kq9-x&token=abc"
    shown = R.redact_url(url)
    assert shown == "postgresql://team:***@db.internal:5432/sentinel?sslmode=require&sslpassword=***&token=***"
    # A stand-in password is masked too: this URL is a real one (redaction of free text would keep "secret").
    assert R.redact_url("postgresql://u:secret@h/db") == "postgresql://u:***@h/db"
    message = 'connection to server failed: FATAL: password authentication failed for user "team" (pa55-Word!)'
    assert "pa55-Word!" not in dburl.redact_text(message, url)
    # ... and free text that happens to hold a token is masked like every other output.
    assert SAMPLES["GitHub token"] not in dburl.redact_text(f"bad token {SAMPLES['GitHub token']}", url)


def test_redact_url_is_linear_on_a_hostile_line():
    import time

    line = "a" * 200_000 + "://" + ":" * 200_000
    start = time.perf_counter()
    R.redact_url(line)
    R.redact(line)
    assert time.perf_counter() - start < 5  # quadratic would be minutes


def test_redact_tree_keeps_our_identifiers_and_masks_the_rest():
    token = SAMPLES["GitHub token"]
    data = {"id": "lx-shop-" + token, "text": [f"token {token}"], "n": 3, "nested": {"url": f"https://u:{token}@h/"}}
    out = R.redact_tree(data, frozenset({"id"}))
    assert out["id"] == data["id"] and out["n"] == 3
    assert token not in str(out["text"]) + str(out["nested"])


@pytest.mark.parametrize("line, secret", [
    ("@=0; token = 'Ab3k9x0q1'", "Ab3k9x0q1"),  # found by the fuzz property: a first assignment hid the second
    ("a=1; password=Xq7mK2pL9vR4; b=2", "Xq7mK2pL9vR4"),
    ("DEBUG = 1 # the old token=Xq7mK2pL9vR4", "Xq7mK2pL9vR4"),
])
def test_every_assignment_of_a_line_is_masked_not_only_the_first(line, secret):
    assert secret not in R.redact(line)


@pytest.mark.parametrize("line", ["ＤＢ_ＰＡＳＳＷＯＲＤ = 'Zq7-s3cret-pw-81'  # TODO: rotate",
                                  "ａｐｉ_ｋｅｙ: \"Zq7-s3cret-pw-81\"",
                                  "self.ｔｏｋｅｎ = 'Zq7-s3cret-pw-81'"])
def test_a_secret_name_in_compatibility_characters_is_still_a_secret_name(line):
    # Python reads ＤＢ_ＰＡＳＳＷＯＲＤ as DB_PASSWORD (PEP 3131); found by the fuzz property's wide-names mutation
    masked = R.redact_line(line)
    assert "Zq7-s3cret-pw-81" not in masked and "Zq***" in masked
    assert R.redact_line("café = 'Zq7-s3cret-pw-81'  # ünïcode") == "café = 'Zq7-s3cret-pw-81'  # ünïcode"  # no name


# --- prose: a secret-like word followed by its value ---------------------------------------------------------

@pytest.mark.parametrize("text, secret", [
    ("the staging db password Zq7-s3cret-pw-81 works again", "Zq7-s3cret-pw-81"),
    ("passwd hunter2!x", "hunter2!x"),
    ("secret s3cr3tV4lue was in the log", "s3cr3tV4lue"),
    ("DB PASSWORD Tr0ub4dor&3 for prod", "Tr0ub4dor&3"),
    ("rotated: the old api key abc123def456 leaked", "abc123def456"),
    ("pwd `Tr0ub4dor&3`", "Tr0ub4dor&3"),
    ("access key Xq7mK2pL9vR4, in CI", "Xq7mK2pL9vR4"),
    ("client secret hUnTeRpW", "hUnTeRpW"),  # letters only, in no case words are written in
    ("the admin password is hunter22.", "hunter22"),
    ("password: Zq7-s3cret-pw-81", "Zq7-s3cret-pw-81"),
    ("pass: hunter2!x", "hunter2!x"),
])
def test_a_secret_written_as_prose_is_masked(text, secret):
    out = R.redact(text)
    assert secret not in out and secret[:2] + "***" in out


@pytest.mark.parametrize("text", [
    "the secret sauce of the scheduler",
    "Fix the password reset flow for invited users",
    "password field length 128",
    "rotate the secret key after 90 days",
    "a secret ingredient",
    "Pass consider_entry_points=True when importing plugins",
    "required to pass charset/collation explicitly",
    "passes x9y8z7w6 through",  # "pass" is a verb
    "the secret SECRET_KEY setting, read from settings.SECRET_KEY",
    "read the password with --password-stdin",
    "secret v1.2.3 and token #1234, fixed in GH-1234",
    "the password PasswordField widget and the secret SecretStr type",
    "secret /etc/app/secret.key is read at start",
    "token refresh on expiry",
])
def test_ordinary_prose_about_secrets_is_left_alone(text):
    assert R.redact(text) == text
