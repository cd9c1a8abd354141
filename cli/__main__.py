"""``python -m mlx26.cli …`` runs the CLI, so ``torchrun --nproc-per-node N -m mlx26.cli zoo train …`` works
(``mlx26`` itself is a namespace package: it has no ``__main__``; see docs/scale-out.md)."""


def main() -> None:
    from mlx26.cli.main import run

    run()


if __name__ == "__main__":
    main()
