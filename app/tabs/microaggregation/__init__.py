"""The Microaggregation tab: MDAV-ID, MDAV-SWAP and IR-SWAP side by side as k varies, and the chosen release."""
