"""What each fixer does, in one sentence, for the rule docs (`sentinel explain`, docs/rules.md).

Kept beside the fixers so the docs say what the code does; light (no import), since the docs need it
without fixing anything.
"""

DETAILS = {
    "SEN201": "tabs become the file's own space step (read from its other lines), or Emacs-style 8-column "
              "tabs; declined when the step or the tab width is unknown, in languages where indentation "
              "can mean something, and in files that may hold a multi-line literal it cannot see",
    "SEN203": "every name the wildcard binds is imported by name (read from the module's source, never by "
              "running it), so the namespace others may read stays the same, up to 30 names; with "
              "`--unsafe-fixes`, only the names the file uses (unsafe: code reading this module's namespace "
              "loses the rest)",
    "SEN204": "the line takes the file's majority line ending; declined inside multi-line literals",
    "SEN205": "the trailing whitespace is stripped; kept inside multi-line literals, after a `\\`, after "
              "text in XML, in Makefiles and .env files",
    "SEN301": "`except:` becomes `except Exception:` (Ctrl-C, `sys.exit()` and task cancellation are no longer "
              "swallowed), or `except BaseException:` (the same behaviour, stated) when the handler may hand "
              "the exception on",
    "SEN303": "`eval(x)` becomes `ast.literal_eval(x)` and `import ast` is added; only literals evaluate "
              "afterwards",
}
