#!/usr/bin/env python3
"""Run a script under a python3 that has the modules it needs.

Debian's packages (python3-gi, python3-numpy, python3-opencv,
python3-skimage, ...) are installed for /usr/bin/python3. The python3 first
on PATH may be another interpreter (pyenv, conda, a virtualenv) that cannot
see them. A script calls ``ensure([...])`` before importing such modules:
when the interpreter running it lacks one, the script starts again under the
first python3 that has them all (printing which, on stderr), or stops with
a message that names the interpreter and the command that installs them.

From a shell, ``python3 scripts/interpreter.py MODULE...`` prints the path
of that interpreter (exit 0), or the same message (exit 1).
"""

import os
import subprocess
import sys

# Debian package and pip distribution of each module the project's scripts use.
PACKAGES = {
    "gi": ("python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0", "PyGObject"),
    "numpy": ("python3-numpy", "numpy"),
    "cv2": ("python3-opencv", "opencv-python"),
    "skimage": ("python3-skimage", "scikit-image"),
    "matplotlib": ("python3-matplotlib", "matplotlib"),
    "PIL": ("python3-pil", "pillow"),
}

# Set in the environment of a restarted script, so that it never restarts twice.
_RESTARTED = "CUDAFILTERS_PYTHON_RESTARTED"
# Exit status when no interpreter has the modules; the test suite sets it to
# 77, Meson's "skipped".
_MISSING_STATUS = "CUDAFILTERS_MISSING_MODULES_STATUS"

_LIST_MISSING = (
    "import importlib.util, sys; "
    "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))"
)


def _candidates():
    """Every distinct python3 on PATH, then the distribution's own."""
    seen = set()
    paths = [os.path.join(d, "python3") for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    paths.append("/usr/bin/python3")
    for path in paths:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        yield path


def _missing_in(python, modules):
    """The modules `python` cannot import; all of them if it does not run."""
    try:
        run = subprocess.run([python, "-c", _LIST_MISSING] + list(modules),
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return list(modules)
    return run.stdout.split() if run.returncode == 0 else list(modules)


def _missing_here(modules):
    import importlib.util
    return [m for m in modules if importlib.util.find_spec(m) is None]


def find(modules):
    """The first python3 that has all `modules` (this one first), or None."""
    if not _missing_here(modules):
        return sys.executable
    this = os.path.realpath(sys.executable)
    for python in _candidates():
        if os.path.realpath(python) != this and not _missing_in(python, modules):
            return python
    return None


def explain(missing, what):
    """A message naming this interpreter, what it lacks and how to install it."""
    system = "/usr/bin/python3"
    system_missing = _missing_in(system, missing) if os.path.exists(system) else missing
    apt = " ".join(dict.fromkeys(PACKAGES.get(m, ("python3-" + m.lower(), m))[0]
                                 for m in system_missing))
    pip = " ".join(dict.fromkeys(PACKAGES.get(m, ("", m))[1] for m in missing))
    return (
        f"error: {what} needs the Python module(s) {', '.join(missing)}, which "
        f"{sys.executable} (Python {sys.version.split()[0]}) lacks, and no other "
        "python3 on PATH or /usr/bin/python3 has them.\n"
        f"  Debian/Ubuntu (for /usr/bin/python3): sudo apt install {apt}\n"
        f"  or for this interpreter:              {sys.executable} -m pip install {pip}"
    )


def ensure(modules):
    """Go on in this interpreter if it has `modules`, else restart the calling
    script under one that has, else exit with explain()'s message."""
    missing = _missing_here(modules)
    if not missing:
        return
    script = os.path.basename(sys.argv[0]) or "this script"
    python = None if os.environ.get(_RESTARTED) else find(modules)
    if python is None:
        print(explain(missing, script), file=sys.stderr)
        sys.exit(int(os.environ.get(_MISSING_STATUS, "1")))
    print(f"{script}: {sys.executable} lacks {', '.join(missing)}; running with {python}",
          file=sys.stderr)
    sys.stderr.flush()
    os.environ[_RESTARTED] = "1"
    os.execv(python, [python, sys.argv[0]] + sys.argv[1:])


# Debian package of each GStreamer typelib.
TYPELIBS = {"Gst": "gir1.2-gstreamer-1.0", "GstApp": "gir1.2-gst-plugins-base-1.0",
            "GstVideo": "gir1.2-gst-plugins-base-1.0"}


def ensure_gst(namespaces=("Gst",), modules=()):
    """ensure(["gi", *modules]), then GStreamer's typelibs `namespaces`
    (version 1.0) for PyGObject, or exit with the package to install."""
    ensure(["gi"] + list(modules))
    import gi
    for namespace in namespaces:
        try:
            gi.require_version(namespace, "1.0")
        except ValueError as error:
            package = TYPELIBS.get(namespace, "the gir1.2 package of " + namespace)
            print(f"error: {error} for {sys.executable}; install it with: sudo apt install {package}",
                  file=sys.stderr)
            sys.exit(int(os.environ.get(_MISSING_STATUS, "1")))


if __name__ == "__main__":
    wanted = sys.argv[1:]
    if not wanted:
        sys.exit(__doc__)
    found = find(wanted)
    if found is None:
        sys.exit(explain(_missing_here(wanted), "this command"))
    print(found)
