#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Field tables: a word's fields declared once, by name, width and meaning, and laid out from bit 0 up.

Gateware packs a word with `pack()` and reads a field with `get()`; host code and the documentation read the
same table (`rows()`), so a layout lives in one place (the way liteeth's common.py declares its headers).
"""

from collections import namedtuple

from migen import Cat, Constant

Field = namedtuple("Field", "name offset width description")


class FieldTable:
    """The fields of a `width`-bit word, in order from bit 0; bits above the last field are zero."""

    def __init__(self, name, width, fields):
        self.name, self.width = name, width
        self.fields, offset = {}, 0
        for field_name, field_width, description in fields:
            self.fields[field_name] = Field(field_name, offset, field_width, description)
            offset += field_width
        assert offset <= width, f"{name}: fields take {offset} bits of {width}"
        self.used = offset

    def __getitem__(self, name):
        return self.fields[name]

    def get(self, word, name):
        """A field of a word (a Migen value or slice): its bits, as a slice."""
        f = self.fields[name]
        return word[f.offset:f.offset + f.width]

    def below(self, word, name):
        """The bits of a word below a field (what a CRC in that field covers)."""
        return word[:self.fields[name].offset]

    def pack(self, **values):
        """The word of the given fields (a Migen expression): fields not given are zero, as are the bits
        above the last field."""
        unknown = set(values) - set(self.fields)
        assert not unknown, f"{self.name} has no field {sorted(unknown)}"
        parts = [self._fit(values.get(f.name, 0), f) for f in self.fields.values()]
        if self.used < self.width:
            parts.append(Constant(0, self.width - self.used))
        return Cat(*parts)

    @staticmethod
    def _fit(value, field):
        """A field's value at exactly its width: an integer as a constant of that width, a narrower signal
        zero-extended, a wider one cut (so that no value moves the fields above it)."""
        if isinstance(value, int):
            assert 0 <= value < 1 << field.width, f"{field.name} = {value} does not fit {field.width} bits"
            return Constant(value, field.width)
        value = value[:field.width] if len(value) > field.width else value
        return Cat(value, Constant(0, field.width - len(value))) if len(value) < field.width else value

    def value(self, word, name):
        """A field of an integer word (host code, tests)."""
        f = self.fields[name]
        return (word >> f.offset) & ((1 << f.width) - 1)

    def word(self, **values):
        """An integer word of the given fields (host code, tests)."""
        out = 0
        for name, v in values.items():
            f = self.fields[name]
            assert 0 <= v < 1 << f.width, f"{self.name}.{name} = {v} does not fit {f.width} bits"
            out |= v << f.offset
        return out

    def rows(self):
        """(bits as "[hi:lo]" or "[n]", name, description) per field, for documentation."""
        return [(f"[{f.offset + f.width - 1}:{f.offset}]" if f.width > 1 else f"[{f.offset}]", f.name, f.description)
                for f in self.fields.values()]
