"""Allow ``python -m goodput_loader``."""

from goodput_loader.cli import main

main()
