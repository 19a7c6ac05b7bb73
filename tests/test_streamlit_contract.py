"""The one private piece of Streamlit the app relies on, checked so that an upgrade that renames it fails here,
by name, instead of quietly dropping the app frame on the first visit after a restart."""

import importlib
from pathlib import Path

from ui.frame.shell import LEGACY_PAGES_FLAG

ROOT = Path(__file__).resolve().parents[1]


def test_the_legacy_pages_flag_still_exists():
    module_name, class_name, attribute = LEGACY_PAGES_FLAG
    owner = getattr(importlib.import_module(module_name), class_name)
    assert hasattr(owner, attribute), (
        f"Streamlit no longer has {module_name}.{class_name}.{attribute}: ui/frame/shell.leave_legacy_pages_mode "
        "cannot leave the pages/-folder mode any more. Find the new name in Streamlit's pages_manager.py."
    )


def test_streamlit_still_decides_it_from_a_pages_folder_beside_the_entry_script():
    """The flag is set from the folder's existence: if that rule changes, the workaround may not be needed."""
    from streamlit.runtime import pages_manager

    source = Path(pages_manager.__file__).read_text(encoding="utf-8")
    assert '"pages"' in source and LEGACY_PAGES_FLAG[2] in source
    assert (ROOT / "pages").is_dir() and (ROOT / "app.py").is_file()
