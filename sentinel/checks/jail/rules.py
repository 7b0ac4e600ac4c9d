"""The jail's rules, as data: codes, names, per-role policy, documentation."""

from __future__ import annotations

from sentinel.models import Severity
from sentinel.roles import CI, DOCS, FIXTURE, GENERATED, TEST, VENDORED
from sentinel.rules import INFO, OFF, SAME, SECURITY_ROLES, WARNING, Rule

CHECK = "jail"


_BAN_CFG = {"jail": {"banned_imports": ["flask"]}}

RULES: tuple[Rule, ...] = (
    Rule(
        "SEN101", "banned-import", CHECK, Severity.ERROR,
        summary="Imports a module the project has banned (jail.banned-imports), including submodules, "
                "__import__/importlib.import_module and JS/TS import/require.",
        rationale="A ban records a decision (licence, security advisory, a replaced library). An agent or a "
                  "hurried author re-introducing the module undoes it silently; the import is the earliest and "
                  "cheapest place to stop it. Banning 'a' bans 'a.x' but not 'ab'; relative imports are never banned.",
        example="import os, flask\n",
        counter_example="from . import views\nimport json\n",
        hint="Remove the import, or lift the ban in jail.banned-imports if the module is now allowed.",
        example_config=_BAN_CFG,
        roles={FIXTURE: OFF, VENDORED: OFF, GENERATED: OFF, DOCS: INFO}, noqa=("TID251", "TID253", "I251"),
    ),
    Rule(
        "SEN102", "banned-dependency", CHECK, Severity.ERROR,
        summary="Adds a banned dependency (or one missing from jail.allowed-dependencies) to requirements*.txt, "
                "constraints*.txt, pyproject.toml, Pipfile or package.json.",
        rationale="Every new dependency is supply-chain surface, licence exposure and install time. Names are "
                  "compared per PEP 503 (Flask_Login == flask-login), so spelling cannot dodge the ban.",
        example="requests==2.31.0\nFlask[async]>=2.3 ; python_version >= '3.9'\n",
        counter_example="requests==2.31.0\n",
        hint="Drop the dependency, or get it approved in jail.banned-dependencies / jail.allowed-dependencies.",
        example_path="requirements.txt",
        example_config={"jail": {"banned_dependencies": ["flask"]}},
        roles={FIXTURE: OFF, VENDORED: OFF, DOCS: INFO},
    ),
    Rule(
        "SEN103", "destructive-filesystem", CHECK, Severity.WARNING,
        summary="Deletes files or directory trees: shutil.rmtree, os.remove/unlink/rmdir/removedirs, "
                "Path.unlink()/rmdir().",
        rationale="Recursive or computed-path deletion is irreversible, and a wrong path variable turns a cleanup "
                  "into data loss. It is also ordinary in real code (temp files, build dirs), so it is a warning: "
                  "visible in review, blocking only with --fail-level warning.",
        example="import shutil\n\n\ndef clean(build_dir):\n    shutil.rmtree(build_dir)\n",
        counter_example="import tempfile\n\n\ndef build(items):\n    with tempfile.TemporaryDirectory() as tmp:\n"
                        "        compile_into(tmp, items)\n        items.remove(None)\n",
        hint="Make sure the path is one this code created (prefer tempfile.TemporaryDirectory); "
             "suppress with a reason.",
        roles=SECURITY_ROLES, security=True,
    ),
    Rule(
        "SEN104", "destructive-process", CHECK, Severity.WARNING,
        summary="Sends signals with os.kill/os.killpg, or runs `rm -r`/destructive git via subprocess/os.system.",
        rationale="Killing arbitrary pids or shelling out to `rm -rf` reaches beyond the process's own resources. "
                  "Like file deletion it has legitimate uses (supervisors, test harnesses), hence a warning.",
        example="import os\nimport signal\n\nos.kill(pid, signal.SIGKILL)\n",
        counter_example="proc.terminate()\nproc.wait(timeout=10)\n",
        hint="Signal only processes you started (proc.terminate()); delete with a scoped API, not `rm -rf`.",
        roles=SECURITY_ROLES, security=True,
    ),
    Rule(
        "SEN105", "destructive-sql", CHECK, Severity.ERROR,
        summary="Executes DROP TABLE/DATABASE/SCHEMA, TRUNCATE, or DELETE without WHERE (literal SQL passed to "
                ".execute/.executemany/.executescript/text(), directly or via a variable).",
        rationale="These statements destroy data wholesale and cannot be undone by a code revert. Schema drops belong "
                  "in reviewed migrations and an unqualified DELETE is almost always a missing WHERE; both block.",
        example='cursor.execute("DROP TABLE users")\n',
        counter_example='cursor.execute("DELETE FROM users WHERE id = ?", (user_id,))\n',
        hint="Put schema drops in a migration; give DELETE a WHERE clause.",
        roles=SECURITY_ROLES, security=True,
    ),
    Rule(
        "SEN106", "destructive-shell", CHECK, Severity.ERROR,
        summary="Shell scripts, Makefiles, Dockerfiles and CI run blocks: `rm -rf` of /, ~, $HOME, ., *, a top-level "
                "dir or an unguarded \"$VAR/\"; `git push --force`, `git reset --hard`, `git clean -f`.",
        rationale="These run unattended in CI and on developers' machines; an empty variable makes `rm -rf \"$X/\"` "
                  "delete `/`, and force-push/hard-reset/clean destroy work that exists nowhere else. Cleaning "
                  "explicit project paths (build/, dist/, /var/lib/apt/lists/*) is not reported.",
        example='#!/bin/sh\nrm -rf "$PREFIX/"\n',
        counter_example='#!/bin/sh\nrm -rf -- "${PREFIX:?}/build"\ngit push --force-with-lease\n',
        hint="Guard variables with ${VAR:?}, delete explicit project paths, use --force-with-lease.",
        example_path="scripts/clean.sh",
        # CI run blocks are what this rule is for: they run unattended with push rights, so they block there too.
        roles={**SECURITY_ROLES, CI: SAME}, security=True,
    ),
    Rule(
        "SEN107", "protected-path-touched", CHECK, Severity.ERROR,
        summary="The change adds, modifies, deletes or renames a protected path (.env, keys, .git/, .ssh/, "
                "credentials...; jail.protected-paths + extra-protected-paths).",
        rationale="Secrets and VCS internals do not belong in a commit, and an agent editing them is out of bounds. "
                  "Examples and templates (.env.example, *.pub) are exempt via jail.protected-exceptions.",
        example="api_token: changeme\n",
        counter_example="# sentinel: ignore[SEN107] placeholder values for local development only\n"
                        "api_token: changeme\n",
        hint="Keep secrets and VCS internals out of the change; list safe files in jail.protected-exceptions.",
        example_path="config/secrets.yml",
        roles={FIXTURE: INFO}, security=True,
    ),
    Rule(
        "SEN108", "protected-path-write", CHECK, Severity.ERROR,
        summary="Code opens a protected path for writing: open(..., 'w'/'a'/'x'/'r+'), Path(...).write_text/"
                "write_bytes/open('w'), os.open(O_WRONLY/O_RDWR/O_CREAT), shutil.copy/move into it.",
        rationale="Writing ~/.ssh/authorized_keys, .git/hooks or .env from code is how a change persists access or "
                  "tampers with the developer's environment; it is never needed by ordinary application code.",
        example='import os\n\nwith open(os.path.expanduser("~/.ssh/authorized_keys"), "a") as fh:\n'
                "    fh.write(public_key)\n",
        counter_example='with open("build/report.txt", "w") as fh:\n    fh.write(report)\n',
        hint="Write to a project or temp path; never to credentials, SSH keys or .git internals.",
        roles={**SECURITY_ROLES, TEST: WARNING}, security=True,
    ),
)
_R = {r.code: r for r in RULES}
SEN101, SEN102, SEN103, SEN104, SEN105, SEN106, SEN107, SEN108 = (_R[f"SEN10{i}"] for i in range(1, 9))
