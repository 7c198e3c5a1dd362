"""The type stubs (kestrel/*.pyi) name every public object of the module, and every object has a docstring."""
import ast
import pathlib

import kestrel


def stub_names(name):
    tree = ast.parse((pathlib.Path(kestrel.__file__).parent / name).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_stubs_cover_the_module():
    for module, stub in ((kestrel, "__init__.pyi"), (kestrel.detect, "detect.pyi"), (kestrel.osd, "osd.pyi"),
                         (kestrel.aipp, "aipp.pyi")):
        public = {n for n in dir(module) if not n.startswith("_") and not isinstance(getattr(module, n), type(kestrel))}
        public -= {"annotations"}
        missing = public - stub_names(stub)
        assert not missing, f"{stub} lacks {sorted(missing)}"


def test_every_public_callable_has_a_docstring():
    for module in (kestrel, kestrel.detect, kestrel.osd, kestrel.aipp):
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or not callable(obj) or isinstance(obj, type(kestrel)):
                continue
            assert (obj.__doc__ or "").strip(), f"{module.__name__}.{name} has no docstring"
