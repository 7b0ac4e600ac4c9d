from sentinel.cli import run

run()
