"""CLI subcommands, one module per group; each module's register() only declares arguments."""
