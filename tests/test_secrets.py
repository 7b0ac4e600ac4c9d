"""Credential helpers: name classification, value assessment, entropy, token formats, redaction."""

from __future__ import annotations

import pytest

from sentinel.checks.secrets import (NOT_SECRET, STRONG, WEAK, assess_value, classify_name, find_tokens,
                                     is_high_entropy, is_placeholder, name_words, private_key_at, redact_line,
                                     redact_value, secret_binding_pattern, shannon_entropy)

AWS_KEY = "AKIA" + "Q3RZ7XW2MPL5VN8T"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SLACK_TOKEN = "xoxb-" + "2145876390-4938271650423-" + "Zq8RwX3vLk5NpT7bYc2HdF9m"
GOOGLE_KEY = "AIza" + "SyD3x9Q2mN7pL4kR8tV1wZ6cB5nH0jF2gX4"
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
OPENAI_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5q" + "T3Blbk" + "FJ" + "Rs8tUv1wXy4zAb7cDe0f"
KEY_BEGIN = "-----BEGIN " + "RSA PRIVATE KEY-----"


@pytest.mark.parametrize("name,words", [
    ("githubToken", ["github", "token"]), ("GITHUB_TOKEN", ["github", "token"]), ("github-token", ["github", "token"]),
    ("APIKey", ["api", "key"]), ("_authToken", ["auth", "token"]), ("password2", ["password2"]),
    ("API_KEY_B64", ["api", "key", "b64"]),
])
def test_name_words(name, words):
    assert name_words(name) == words


@pytest.mark.parametrize("name,level", [
    ("password", STRONG), ("DB_PASSWORD", STRONG), ("passwd", STRONG), ("pwd", STRONG), ("secret", STRONG),
    ("client_secret", STRONG), ("clientSecret", STRONG), ("api_key", STRONG), ("apiKey", STRONG), ("APIKEY", STRONG),
    ("access_key", STRONG), ("AWS_SECRET_ACCESS_KEY", STRONG), ("private_key", STRONG), ("auth_token", STRONG),
    ("access_token", STRONG), ("github_token", STRONG), ("TOKEN", STRONG), ("credentials", STRONG),
    ("password_value", STRONG), ("API_KEY_B64", STRONG), ("password1", STRONG),
    # the secret word is a qualifier, not the head
    ("token_count", NOT_SECRET), ("token_type", NOT_SECRET), ("password_field", NOT_SECRET),
    ("max_token", NOT_SECRET), ("min_password_length", NOT_SECRET), ("num_tokens", NOT_SECRET),
    ("token_url", NOT_SECRET), ("secret_name", NOT_SECRET), ("password_file", NOT_SECRET),
    ("api_key_path", NOT_SECRET), ("TOKEN_ENDPOINT", NOT_SECRET), ("hashed_password", NOT_SECRET),
    ("public_key", NOT_SECRET), ("pad_token", NOT_SECRET), ("eos_token", NOT_SECRET), ("is_secret", NOT_SECRET),
    ("page_token", NOT_SECRET), ("input_token", NOT_SECRET), ("refresh_token", STRONG),
    ("tokens", NOT_SECRET), ("keyword", NOT_SECRET), ("monkey", NOT_SECRET), ("username", NOT_SECRET),
    # weak heads need a high-entropy value
    ("SECRET_KEY_BASE", STRONG), ("signing_key", WEAK), ("salt", WEAK), ("Authorization", WEAK), ("key", WEAK),
])
def test_classify_name(name, level):
    assert classify_name(name) == level


def test_extra_secret_names_are_strong_and_respect_qualifiers():
    assert classify_name("pin_code") == NOT_SECRET
    assert classify_name("pin_code", ("pin_code",)) == STRONG
    assert classify_name("PIN_CODE", ("pin_code",)) == STRONG
    assert classify_name("max_pin_code", ("pin_code",)) == NOT_SECRET


@pytest.mark.parametrize("value", [
    "", "  ", "changeme", "CHANGE_ME", "YOUR_API_KEY", "your-token-here", "<password>", "xxx", "xxxxxxxx", "***",
    "${DB_PASSWORD}", "$DB_PASSWORD", "{password}", "{{ vault_pw }}", "%(password)s", "dummy", "example", "test",
    "password", "secret", "replace-with-your-key", "sk-example-123456", "[PAD]", "vault:secret/data/db",
    "notasecret", "redacted",
])
def test_placeholders(value):
    assert is_placeholder(value, "api_key")


@pytest.mark.parametrize("value", ["hunter2", "s3cr3t!Pw", "Tr0ub4dor&3", "k9Qz7LmX2a", "test-password-1"])
def test_real_looking_values_are_not_placeholders_outside_tests(value):
    assert not is_placeholder(value, "password")


def test_test_markers_only_count_in_tests():
    assert not is_placeholder("testing-pass-99", "password")
    assert is_placeholder("testing-pass-99", "password", in_test=True)
    assert is_placeholder("mock-pass-99", "password", in_test=True)


def test_value_equal_to_name_is_a_placeholder():
    assert is_placeholder("GITHUB_TOKEN", "github_token")
    assert is_placeholder("github-token", "GITHUB_TOKEN")


@pytest.mark.parametrize("value,level,reason", [
    ("hunter2", STRONG, "literal"),
    ("Tr0ub4dor&3", STRONG, "literal"),
    ("postgres://app:s3cr3tpw@db/prod", STRONG, "url"),
    ("postgres://app:password@db/prod", STRONG, None),  # placeholder password in a URL
    ("https://api.example.com/v1/token", STRONG, None),  # URL without credentials
    ("abc12", STRONG, None),  # too short
    ("1234567890", STRONG, None),  # digits only
    ("/run/secrets/db_password", STRONG, None),  # a path
    ("access_token", STRONG, None),  # an identifier used as a field name
    ("DB_PASSWORD", STRONG, None),  # an environment variable's name
    ("accessToken", STRONG, None),
    ("AWSSecretKey", STRONG, None),
    ("failed-to-connect-to-db", STRONG, None),  # a slug
    ("Passwort", STRONG, None),  # a label in a translation file
    ("Enter your password", STRONG, None),  # prose
    ("^1.2.3", STRONG, None),  # a version spec
    (r"[-!#$%&*+.^_|~0-9A-Za-z]+", STRONG, None),  # a regex
    ("X-Api-Key", STRONG, None),  # a header name
    ("list[V1LocalObjectReference]", STRONG, None),  # a type expression
    ("q8Xz3LmP0vR7tYb2WnK5sJd9HcF4gA1e", WEAK, "entropy"),
    ("3f7a9c2e8b1d4f6a0c5e9b2d7f1a3c8e", WEAK, "entropy"),  # hex key
    ("Bearer q8Xz3LmP0vR7tYb2WnK5sJd9HcF4gA1e", WEAK, "entropy"),
    ("Basic dXNlcm5hbWU6cGFzc3dvcmQ=", WEAK, None),  # base64("username:password")
    ("user_profile_cache_entry", WEAK, None),
    ("ProjectSummariesAndDetails", WEAK, None),  # long, but no digits: a word
    ("258EAFA5-E914-47DA-95CA-C5AB0DC85B11", WEAK, None),  # a UUID
    ("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEabcdefghij1234567890", WEAK, None),  # a public key
    ("hunter2", NOT_SECRET, None),
])
def test_assess_value(value, level, reason):
    assert assess_value(value, level, "api_key") == reason


def test_entropy():
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == 2.0
    assert is_high_entropy("q8Xz3LmP0vR7tYb2WnK5sJd9HcF4gA1e", 4.5)
    assert not is_high_entropy("q8Xz3LmP0vR7tYb2", 4.5)  # shorter than 20 characters
    assert not is_high_entropy("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", 4.5)
    assert not is_high_entropy("q8Xz3LmP0vR7tYb2 nK5sJd9HcF4gA1e", 4.5)  # not a base64/hex alphabet


@pytest.mark.parametrize("token,kind", [
    (AWS_KEY, "AWS access key id"), (GITHUB_TOKEN, "GitHub token"), (SLACK_TOKEN, "Slack token"),
    (GOOGLE_KEY, "Google API key"), (STRIPE_KEY, "Stripe live secret key"), (OPENAI_KEY, "OpenAI API key"),
])
def test_find_tokens(token, kind):
    line = f'  value: "{token}"  # from the console'
    found = list(find_tokens(line))
    assert [(line[s:e], k) for s, e, k in found] == [(token, kind)]


@pytest.mark.parametrize("text", [
    "AKIAIOSFODNN7EXAMPLE",  # AWS documentation's example key
    "ghp_" + "x" * 36, "ghp_" + "0" * 36, "AKIA" + "A" * 16,
    "XAKIA" + "Q3RZ7XW2MPL5VN8T",  # inside a longer word
    "ghp_short", "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
])
def test_find_tokens_ignores_placeholders_and_near_misses(text):
    assert list(find_tokens(f"x = '{text}'")) == []


def test_private_key_needs_key_material():
    lines = ["", f'KEY = """{KEY_BEGIN}', "MIIEowIBAAKCAQEAx7Kp2vQ9Lm3Rt8WzLm3Rt8WzLm3Rt8WzLm3Rt8Wz", '"""']
    assert private_key_at(lines, 1) is not None
    marker_only = ["", f'if pem.startswith("{KEY_BEGIN}"):', "    return True"]
    assert private_key_at(marker_only, 1) is None
    elided = ["", KEY_BEGIN, "...", "-----END RSA PRIVATE KEY-----"]
    assert private_key_at(elided, 1) is None


def test_redact_value():
    assert redact_value("hunter2") == "hu***"
    assert redact_value("abc") == "***"


@pytest.mark.parametrize("line,secret", [
    (f'aws_access_key_id = "{AWS_KEY}"', AWS_KEY),
    (f"curl -H 'Authorization: token {GITHUB_TOKEN}'", GITHUB_TOKEN),
    (f"SLACK={SLACK_TOKEN}", SLACK_TOKEN),
    ('password = "Zephyr-9-Quokka"', "Zephyr-9-Quokka"),
    ('"password": "Zephyr-9-Quokka",', "Zephyr-9-Quokka"),
    ("DB_PASSWORD=Zephyr-9-Quokka", "Zephyr-9-Quokka"),
    ("password: Zephyr-9-Quokka  # prod", "Zephyr-9-Quokka"),
    ('connect(password="Zephyr-9-Quokka", user="app")', "Zephyr-9-Quokka"),
    ("DATABASE_URL=postgres://app:Zephyr-9-Quokka@db:5432/prod", "Zephyr-9-Quokka"),
    ("MIIEowIBAAKCAQEAx7Kp2vQ9Lm3Rt8WzQk4Zr9TnAb3dEf6hIj9kLm2nOp5q", "MIIEowIBAAKCAQEAx7Kp2vQ9"),  # a PEM body line
    (f"{KEY_BEGIN}\\nMIIEowIBAAKCAQEAx7Kp2vQ9Lm3Rt8WzLm3Rt8WzLm3Rt8Wz", "MIIEowIBAAKCAQEAx7Kp2vQ9Lm3Rt8Wz"),
])
def test_redact_line_masks_secrets(line, secret):
    out = redact_line(line)
    assert secret not in out
    assert out.count("***") + out.count("<redacted>") >= 1


@pytest.mark.parametrize("line", [
    'password = os.environ["DB_PASSWORD"]',
    "token_count = 12",
    "hardcoded credential assigned to 'password'",
    "`except Exception` swallows every error (body is only `pass`)",
    'api_key = "YOUR_API_KEY"',
    "see https://example.com/docs",
    "resolved before in 3f786850e387550fdab836ed7e6dc881de23001b",  # a commit id stays readable
    "AnExtremelyLongCamelCaseIdentifierWithoutDigitsInIt",
    "",
])
def test_redact_line_leaves_ordinary_text_alone(line):
    assert redact_line(line) == line


def test_binding_gate_is_for_lowercased_text():
    gate = secret_binding_pattern()
    assert gate.search('db_password = "x"')
    assert gate.search('"apikey": "x"')
    assert gate.search("signing_key: x")
    assert not gate.search("// token count")
    assert secret_binding_pattern(("pin_code",)).search("pin_code = 1")
