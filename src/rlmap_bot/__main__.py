"""`python -m rlmap_bot` runs the same command line as `rlmap-bot`."""

from rlmap_bot.cli.main import main

main()
