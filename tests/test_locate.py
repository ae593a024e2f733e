"""Finding a function's source: files parsed once, few kept."""

import importlib.util
import math

from wengert import grad, locate


def _module(path, body):
    path.write_text(body)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_few_parsed_files_are_kept_and_the_others_parsed_again(tmp_path):
    """Derivatives made from more files than the cache keeps: at most ``_PARSED_KEPT``
    syntax trees stay alive (each is tens of thousands of objects every full collection
    walks), and a function whose file was dropped is found and differentiated again."""
    mods = [_module(tmp_path / f"kept_{k}.py",
                    "import math\n\n\n"
                    f"def f(x):\n    return math.sin({k + 1}.0 * x) * x\n")
            for k in range(locate._PARSED_KEPT + 3)]
    for k, m in enumerate(mods):
        c = k + 1.0
        assert math.isclose(grad(m.f)(0.4), c * math.cos(c * 0.4) * 0.4 + math.sin(c * 0.4))
    kept = [f for f in locate._PARSED if f.startswith(str(tmp_path))]
    assert len(locate._PARSED) <= locate._PARSED_KEPT
    assert str(tmp_path / "kept_0.py") not in kept
    assert kept[-1] == str(tmp_path / f"kept_{len(mods) - 1}.py")
    # The first file's tree was dropped: a new function there is parsed again.
    again = _module(tmp_path / "kept_0.py",
                    "import math\n\n\ndef f(x):\n    return math.cos(x) * x\n")
    assert math.isclose(grad(again.f)(0.4), -math.sin(0.4) * 0.4 + math.cos(0.4))
    assert str(tmp_path / "kept_0.py") in locate._PARSED


def test_a_file_read_again_is_the_most_recent(tmp_path):
    """The file of the function lowered last is kept longest."""
    first = tmp_path / "first.py"
    first.write_text("def f(x):\n    return x\n")
    assert locate.parse_file(str(first)) is not None
    for k in range(locate._PARSED_KEPT - 1):
        other = tmp_path / f"other_{k}.py"
        other.write_text("def g(x):\n    return x\n")
        locate.parse_file(str(other))
        locate.parse_file(str(first))  # (used again: not the oldest)
    newest = tmp_path / "newest.py"
    newest.write_text("def h(x):\n    return x\n")
    locate.parse_file(str(newest))
    assert str(first) in locate._PARSED
