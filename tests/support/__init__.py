"""What the tests share: helpers, fixtures, worker scripts and tiny apps (no tests here)."""
