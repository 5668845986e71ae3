"""The one bounded reader (`workload_map._io`): regular files, devices, pipes, FIFOs, stdin and streams, the limit
counted on the bytes read (issue 16: `/dev/zero` read without bound, a FIFO without a writer blocked forever)."""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from workload_map import WorkloadMapError, load_definitions, scan_definitions
from workload_map._io import (
    MAX_INPUT_BYTES,
    InputError,
    InputTimeoutError,
    InputTooLargeError,
    read_input,
    read_input_text,
)
from workload_map.model import DefinitionError, DocumentError, read_documents, read_source_text
from workload_map.validation import check_files

needs_posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and devices are POSIX")


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"a: 1\n")
    assert read_input(path) == b"a: 1\n"
    assert read_input_text(str(path)) == (str(path), "a: 1\n")


def test_the_limit_is_counted_on_the_bytes_read_and_the_message_names_path_and_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"x" * 11)
    assert read_input(path, limit=11) == b"x" * 11
    with pytest.raises(InputTooLargeError) as info:
        read_input(path, limit=10)
    assert info.value.limit == 10
    assert str(info.value) == f"{path}: input is larger than the 10 bytes limit; inputs over it are refused"
    assert isinstance(info.value, WorkloadMapError)


@needs_posix
def test_dev_zero_stops_at_the_limit_instead_of_reading_forever() -> None:
    started = time.monotonic()
    with pytest.raises(InputTooLargeError, match="/dev/zero: input is larger than the 1 MiB limit"):
        read_input("/dev/zero", limit=1024 * 1024)
    with pytest.raises(InputTooLargeError, match="64 MiB"):
        read_input("/dev/zero")
    assert time.monotonic() - started < 10


@needs_posix
def test_dev_zero_as_definitions_or_documents_is_a_library_error() -> None:
    message = "/dev/zero: input is larger than the 64 MiB limit"
    with pytest.raises(DefinitionError, match=message) as info:
        load_definitions("/dev/zero")
    assert info.value.unreadable
    (problem,) = scan_definitions("/dev/zero").problems
    assert message in str(problem)
    with pytest.raises(DocumentError, match=message):
        read_documents("/dev/zero")


@needs_posix
def test_validate_of_dev_zero_reports_the_file() -> None:
    report = check_files(["/dev/zero"])
    assert "64 MiB" in report.lines()[-1]


@needs_posix
def test_a_file_whose_size_says_zero_is_still_read(tmp_path: Path) -> None:
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc")
    assert status.stat().st_size == 0
    assert b"Name:" in read_input(status)


@needs_posix
def test_a_fifo_with_no_writer_times_out_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(InputTimeoutError) as info:
        read_input(fifo, timeout=0.3)
    assert 0.2 < time.monotonic() - started < 5
    assert str(fifo) in str(info.value) and "0.3 s" in str(info.value)
    with pytest.raises(DocumentError, match=r"cannot be read: no end of input within 0\.2 s"):
        read_source_text(fifo, timeout=0.2)


@needs_posix
def test_a_fifo_with_a_writer_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write() -> None:
        time.sleep(0.1)  # the reader opens first and waits for the writer
        with open(fifo, "wb") as handle:
            handle.write(b"kind: X\n" * 1000)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert read_input(fifo, timeout=10) == b"kind: X\n" * 1000
    finally:
        writer.join()


@needs_posix
def test_a_pipe_is_bounded_on_the_bytes_read() -> None:
    read_end, write_end = os.pipe()

    def write() -> None:
        try:
            while True:
                os.write(write_end, b"y" * 65536)
        except OSError:
            pass  # the reader closed its end

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        with pytest.raises(InputTooLargeError):
            read_input(f"/dev/fd/{read_end}", limit=200_000, timeout=10)
    finally:
        os.close(read_end)
        writer.join(5)
        os.close(write_end)


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory, not a file") as info:
        read_input(tmp_path)
    assert info.value.reason == "directory"


def test_a_missing_file_and_a_binary_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_input(tmp_path / "nope")
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match=r"is not UTF-8 text \(byte 0\)"):
        read_input_text(tmp_path / "bin")


def test_stdin_is_read_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbfa: 1\n")))
    assert read_input_text("-") == ("<stdin>", "a: 1\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"z" * 101)))
    with pytest.raises(InputTooLargeError, match="<stdin>: input is larger than the 100 bytes limit"):
        read_input("-", limit=100)
    monkeypatch.setattr(sys, "stdin", io.StringIO("text only"))  # a test runner's text stdin
    assert read_input("-") == b"text only"


def test_closed_stdin_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(InputError, match="standard input is closed"):
        read_input("-")
    with pytest.raises(DocumentError, match="<stdin>: cannot be read"):
        read_documents("-")


@needs_posix
def test_stdin_with_a_budget_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(read_end, "rb", closefd=False) as handle:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(handle))
            with pytest.raises(InputTimeoutError, match="<stdin>"):
                read_input("-", stdin_timeout=0.2)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_stream_is_read_and_bounded() -> None:
    assert read_input(io.BytesIO(b"abc"), label="x") == b"abc"
    with pytest.raises(InputTooLargeError, match=r"^x: "):
        read_input(io.BytesIO(b"abcd"), limit=3, label="x")


def test_a_source_that_is_not_a_path_or_stream_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="an input must be a path"):
        read_input(5)  # type: ignore[arg-type]


def test_the_default_limit_is_64_mib() -> None:
    assert MAX_INPUT_BYTES == 64 * 1024 * 1024


def test_a_directory_below_a_hidden_or_parent_path_is_scanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workload_map.model.yamlio import iter_files

    defs = tmp_path / ".config" / "wmap" / "definitions"
    (defs / ".git").mkdir(parents=True)
    (defs / "a.yaml").write_text("a: 1\n")
    (defs / ".hidden.yaml").write_text("a: 1\n")
    (defs / ".git" / "b.yaml").write_text("a: 1\n")
    assert list(iter_files(defs)) == [defs / "a.yaml"]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    relative = Path("..") / ".config" / "wmap" / "definitions"
    assert list(iter_files(relative)) == [relative / "a.yaml"]


_BOM_CASES = [b"", b"abc", b"\xef\xbb\xbfabc", b"\xef\xbb\xbf", b"\xef\xbb", b"\xef\xbb\xbf\xef\xbb\xbfx"]
_BOM_CASES += [b"a\xffb", b"\xef\xbb\xbfa\xffb", b"\xef\xbb\xbf\xc3", "héllo ✓".encode(), b"\xef\xbb\xbf\xe2\x9c"]


@pytest.mark.parametrize("data", _BOM_CASES)
def test_text_is_decoded_as_the_utf_8_sig_codec_decodes_it(data: bytes) -> None:
    # the BOM is dropped by hand (no codec search at start-up): the text, and an error's byte, as utf-8-sig gives them
    try:
        expected = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        with pytest.raises(InputError, match=rf"is not UTF-8 text \(byte {exc.start}\)$"):
            read_input_text(io.BytesIO(data))
    else:
        assert read_input_text(io.BytesIO(data)) == ("<stream>", expected)


@pytest.mark.parametrize("size", [0, 1, 4095, 65_536, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1, 3_000_000])
@pytest.mark.parametrize("said", ["true", "smaller", "zero", "larger"])
def test_a_regular_file_is_read_whole_whatever_its_size_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, said: str
) -> None:
    # the first read asks for the size fstat gives (and one byte more): a file that grew since, or whose size says
    # less or more than it holds, is read to its end all the same, and the limit is counted on what is read
    path = tmp_path / "data"
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path.write_bytes(data)
    real_fstat = os.fstat

    class Said:
        def __init__(self, status: os.stat_result) -> None:
            self.st_mode = status.st_mode
            self.st_size = {"true": size, "smaller": size // 3, "zero": 0, "larger": size * 2 + 10}[said]

    monkeypatch.setattr(os, "fstat", lambda fd: Said(real_fstat(fd)))
    assert read_input(str(path)) == data
    if size:
        with pytest.raises(InputTooLargeError):
            read_input(str(path), limit=size - 1)
        assert read_input(str(path), limit=size) == data
