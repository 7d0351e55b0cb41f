"Every committed figure and table comes from the current code and settings (see `factorizer_nb.infra.reporting.output_problems`)."
from factorizer_nb.infra.reporting import output_problems


def test_no_stale_outputs():
    problems = output_problems()
    assert not problems, "stale outputs under figures/ (regenerate them with make reproduce):\n" + "\n".join(
        f"  {f}: {'; '.join(p)}" for f, p in problems.items())
