"""microrelease.app: command line and dashboard over microrelease.core."""
