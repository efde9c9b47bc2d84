"""Privacy criteria: the protocol every criterion declares (:mod:`.criterion`), k-anonymity
(:mod:`.k_anonymity`), the one registry and text parsing (:mod:`.registry`), what a front end asks
for each criterion's parameters (:mod:`.controls`), a question's set of criteria
(:mod:`.criteria_set`). The other criteria live with their family: the sensitive-attribute models
in :mod:`microrelease.core.models`, k-map and the risk limits in :mod:`microrelease.core.risk`."""
