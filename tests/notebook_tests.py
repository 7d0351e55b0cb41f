"""Each notebook's tests in a process of its own, `--workers` at a time, forked from one that has imported the heavy
libraries once (numpy, pandas, torch, matplotlib, IPython): no notebook sees another's state (a class one patches, a
module one imports), and none pays those imports again. The notebooks run in the order given; the exit status is 1 if
any failed, and they are named last.

    python tests/notebook_tests.py [--workers 2] NOTEBOOK...
"""
import argparse, os, sys, time


def run_one(notebook: str) -> int:
    "A notebook's tests by nbdev-test, in this (forked) process; its exit status."
    from nbdev.test import nbdev_test
    try:
        nbdev_test(path=notebook, timing=True)
        return 0
    except SystemExit as e:                      # nbdev-test exits 1 when a notebook fails
        return e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback; traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush(); sys.stderr.flush()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    import numpy, pandas, torch, matplotlib, IPython, execnb.shell, nbdev.test    # noqa: F401 (once, before any fork)
    queue, running, failed, t0 = list(a.notebooks), {}, [], time.time()
    while queue or running:
        while queue and len(running) < max(a.workers, 1):
            notebook = queue.pop(0)
            pid = os.fork()
            if pid == 0: os._exit(run_one(notebook))        # the child: one notebook, then gone with all it changed
            running[pid] = notebook
        pid, status = os.wait()
        if os.waitstatus_to_exitcode(status) != 0: failed.append(running[pid])
        running.pop(pid)
    print(f"notebook tests: {len(a.notebooks) - len(failed)} of {len(a.notebooks)} passed in {time.time() - t0:.0f} s")
    if failed: print("failed:\n\t" + "\n\t".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__": sys.exit(main())
