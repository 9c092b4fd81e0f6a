"""The `spark-pair` command line: `main` (the command group, each sub-command loaded when named)
and `commands/` (one module per sub-command; the simulator's is sim.command)."""
