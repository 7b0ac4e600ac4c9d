"""Language of a file from its extension, name or shebang line."""

from __future__ import annotations

import os

_BY_EXTENSION = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".ksh": "shell",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".rb": "ruby",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp",
    ".php": "php", ".swift": "swift", ".scala": "scala", ".lua": "lua", ".pl": "perl",
    ".sql": "sql",
    ".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json", ".ini": "ini", ".cfg": "ini",
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text",
    ".html": "html", ".htm": "html", ".css": "css", ".xml": "xml",
    ".mk": "make", ".dockerfile": "docker",
}
_BY_NAME = {
    "makefile": "make", "gnumakefile": "make", "dockerfile": "docker", "jenkinsfile": "groovy",
    "justfile": "make",
}
_SHEBANG = (("python", "python"), ("node", "javascript"), ("bash", "shell"), ("/sh", "shell"),
            ("zsh", "shell"), ("ruby", "ruby"), ("perl", "perl"))

# Languages whose comments and strings we know how to strip ("#", "//" and "/* */" families).
HASH_COMMENT = {"python", "shell", "ruby", "perl", "yaml", "toml", "make", "docker", "ini"}
SLASH_COMMENT = {"javascript", "typescript", "go", "rust", "java", "kotlin", "c", "cpp", "csharp",
                 "php", "swift", "scala", "groovy"}
PROSE = {"markdown", "rst", "text"}


def detect_language(path: str, first_line: str | None = None) -> str:
    name = os.path.basename(path).lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name.startswith(".env"):
        return "dotenv"
    _, ext = os.path.splitext(name)
    if ext in _BY_EXTENSION:
        return _BY_EXTENSION[ext]
    if first_line and first_line.startswith("#!"):
        for needle, lang in _SHEBANG:
            if needle in first_line:
                return lang
    return "unknown"
