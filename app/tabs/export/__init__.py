"""The Export tab: the released CSV and its report, the files ``microrelease release`` writes."""
