"""mlx26 command-line interface (typer)."""
