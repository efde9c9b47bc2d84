"""Privacy criteria: the protocol every criterion declares (``.criterion``), k-anonymity
(``.k_anonymity``), the one registry and text parsing (``.registry``), what a front end asks
for each criterion's parameters (``.controls``), a question's set of criteria
(``.criteria_set``). The other criteria live with their family: the sensitive-attribute models
in ``microrelease.core.models``, k-map and the risk limits in ``microrelease.core.risk``."""
