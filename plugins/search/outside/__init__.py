"""Outside memories: other tools' indexes muninn queries where they lie, read-only, never writes or
syncs (docs/search.md, "Outside memories"). Named apart from the readers' keyword indexes, which the
code calls stores. With none declared in muninn.yaml nothing here is imported."""
