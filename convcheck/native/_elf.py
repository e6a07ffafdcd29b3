"""What a shared library exports and needs, read from its ELF file without loading it.

Loading a library runs its constructors, and a sanitized one cannot even be loaded into a
process that did not preload the sanitizer runtime; reading the dynamic symbol table and
the dynamic section is safe in the parent process. 64-bit ELF only (either byte order);
anything else gives ``None`` and the caller falls back to loading it in a subprocess.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_SHT_DYNAMIC = 6
_SHT_DYNSYM = 11
_DT_NULL = 0
_DT_NEEDED = 1
_SHN_UNDEF = 0


@dataclass(frozen=True)
class DynamicInfo:
    defined: frozenset[str]  # symbols the library exports
    undefined: frozenset[str]  # symbols it expects another object to provide
    needed: tuple[str, ...]  # DT_NEEDED: the libraries it links against

    @property
    def sanitized(self) -> bool:
        """Built with ASan: it needs the ASan runtime preloaded to be loaded by Python."""
        if any(name.startswith(("libasan.so", "libclang_rt.asan")) for name in self.needed):
            return True
        return any(name.startswith("__asan_") for name in self.undefined)


def read_dynamic_info(path: Path) -> DynamicInfo | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2:  # ELFCLASS64
        return None
    order = "<" if data[5] == 1 else ">"
    try:
        return _parse(data, order)
    except (struct.error, IndexError, UnicodeDecodeError):
        return None


def _parse(data: bytes, order: str) -> DynamicInfo:
    (shoff,) = struct.unpack_from(order + "Q", data, 0x28)
    shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
    sections = []
    for i in range(shnum):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info,
        # sh_addralign, sh_entsize
        fields = struct.unpack_from(order + "IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append(fields)

    def string_at(table: int, offset: int) -> str:
        start = sections[table][4] + offset
        end = data.index(b"\0", start)
        return data[start:end].decode()

    defined: set[str] = set()
    undefined: set[str] = set()
    needed: list[str] = []
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind == _SHT_DYNSYM and entsize:
            for at in range(offset + entsize, offset + size, entsize):  # entry 0 is null
                st_name, _st_info, _st_other, st_shndx = struct.unpack_from(
                    order + "IBBH", data, at
                )
                name = string_at(link, st_name)
                if name:
                    (undefined if st_shndx == _SHN_UNDEF else defined).add(name)
        elif kind == _SHT_DYNAMIC and entsize:
            for at in range(offset, offset + size, entsize):
                tag, value = struct.unpack_from(order + "qQ", data, at)
                if tag == _DT_NULL:
                    break
                if tag == _DT_NEEDED:
                    needed.append(string_at(link, value))
    return DynamicInfo(frozenset(defined), frozenset(undefined), tuple(needed))
