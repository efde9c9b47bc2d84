"""The pruned exact search over the lattice: a node evaluator whose cost follows the answer, Flash's
binary search along paths with predictive tagging, and branch-and-bound for ARX's quality models."""

from microrelease.core.search.answer import PrunedAnswer, supports
from microrelease.core.search.evaluator import NodeEvaluator, NodeFigures
from microrelease.core.search.flash import PrunedSearch
from microrelease.core.search.memory import SearchMemory
from microrelease.core.search.pruned_answer import search_pruned

__all__ = ["NodeEvaluator", "NodeFigures", "PrunedAnswer", "PrunedSearch", "SearchMemory", "search_pruned", "supports"]
