"""The Compare tab: two or three pinned nodes side by side (figures, risk, class sizes, each QI's distribution)."""
