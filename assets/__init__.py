"""Static files of the dashboard (CSS, logo)."""
