"""The ``microrelease`` command line: search, release, check, risk, microaggregate, dp, sequential and app.

- ``search``: the k-minimal generalizations, Find_vector and the preferred node of a table's lattice;
- ``release``: write the released table (the policy's node, or ``--node``) and its report;
- ``check``: is a file k-anonymous over some columns? (exit 0 yes, 1 no);
- ``risk``: the re-identification risk of a table (prosecutor, journalist, marketer, population
  uniqueness, individual risk), as it is or generalized to a node;
- ``microaggregate``: MDAV-ID, MDAV-SWAP or IR-SWAP on numeric attributes;
- ``dp``: an epsilon-differentially private release of numeric attributes;
- ``sequential``: k-anonymize entities with a relational part and visit sequences;
- ``app``: serve the dashboard.

One module per command, over the option groups of ``options``; each command
parses its arguments once into a frozen request. Errors in the input print one line naming the flag,
column, value or file, and exit with status 2 (``flags`` maps the core's
parameter names to flags).
"""

from microrelease.app.cli.progress import ProgressBar
from microrelease.app.cli.run import build_parser, main

__all__ = ["ProgressBar", "build_parser", "main"]
