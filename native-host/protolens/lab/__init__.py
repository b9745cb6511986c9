"""Lab campaigns: plan (pure), run against the testbed (adapter), report, reproduce the papers."""
