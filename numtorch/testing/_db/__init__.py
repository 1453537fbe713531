"""The OpInfo entries, one module per area; each module registers on import (see opinfo.py)."""
