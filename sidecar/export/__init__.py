"""Generated files, from the code: the editors' protocol and settings mirrors, the docs' tables, the README's map."""
