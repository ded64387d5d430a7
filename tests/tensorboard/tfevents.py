"""A reader of TensorBoard event files written from the formats' specifications alone, to check
stoker's writer from the outside (it shares no code with it):

- TFRecord: each record is uint64 length, uint32 masked CRC32C of the length's 8 bytes, the
  payload, uint32 masked CRC32C of the payload, all little-endian; mask(c) =
  ((c >> 15) | (c << 17)) + 0xa282ead8 modulo 2**32. CRC32C is the Castagnoli CRC (reflected
  polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF).
- Protocol buffers' wire format: key = varint(field << 3 | wire type); wire type 0 varint, 1
  fixed 8 bytes, 2 varint length + bytes, 5 fixed 4 bytes.
- tensorflow.Event: wall_time = 1 (double), step = 2 (int64), file_version = 3 (string),
  summary = 5 (Summary); Summary: value = 1 (repeated Value); Summary.Value: tag = 1 (string),
  simple_value = 2 (float).
"""
import struct


def _crc32c_table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(data):
    """The payloads of the complete records at the start of `data` (bytes), and the offset where
    they end. Stops at a record that is cut off or whose CRCs do not match."""
    out, at = [], 0
    while len(data) - at >= 12:
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if length_crc != masked_crc32c(header) or len(data) - at - 12 < length + 4:
            break
        payload = data[at + 12:at + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if payload_crc != masked_crc32c(payload):
            break
        out.append(payload)
        at += 16 + length
    return out, at


def _varint(data, at):
    value, shift = 0, 0
    while True:
        if at >= len(data):
            raise ValueError("varint runs past the end of the message")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7


def fields(message):
    """[(field number, wire type, value)] of one protobuf message: ints for wire type 0, raw
    bytes for the others."""
    out, at = [], 0
    while at < len(message):
        key, at = _varint(message, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(message, at)
        elif wire == 1:
            value, at = message[at:at + 8], at + 8
        elif wire == 2:
            length, at = _varint(message, at)
            value, at = message[at:at + length], at + length
        elif wire == 5:
            value, at = message[at:at + 4], at + 4
        else:
            raise ValueError(f"wire type {wire} of field {number} is not one an Event uses")
        if at > len(message):
            raise ValueError(f"field {number} runs past the end of the message")
        out.append((number, wire, value))
    return out


def event(payload):
    """{"wall_time", "step", "file_version" (or None), "scalars": [(tag, value)]}"""
    result = {"wall_time": None, "step": 0, "file_version": None, "scalars": []}
    for number, wire, value in fields(payload):
        if number == 1 and wire == 1:
            result["wall_time"] = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            result["step"] = value - (1 << 64) if value >= 1 << 63 else value
        elif number == 3 and wire == 2:
            result["file_version"] = value.decode()
        elif number == 5 and wire == 2:
            for v_number, v_wire, v in fields(value):
                assert v_number == 1 and v_wire == 2, (v_number, v_wire)
                tag, simple = None, None
                for f_number, f_wire, f in fields(v):
                    if f_number == 1 and f_wire == 2:
                        tag = f.decode()
                    elif f_number == 2 and f_wire == 5:
                        simple = struct.unpack("<f", f)[0]
                result["scalars"].append((tag, simple))
        else:
            raise ValueError(f"unexpected Event field {number} (wire type {wire})")
    return result


def read(path):
    """The events of a file, checking that it ends on a complete record."""
    data = open(path, "rb").read()
    payloads, end = records(data)
    assert end == len(data), f"{path}: {len(data) - end} bytes after the last complete record"
    return [event(p) for p in payloads]


def scalars_by_tag(events):
    """{tag: [(step, value, wall_time)]} in file order."""
    out = {}
    for e in events:
        for tag, value in e["scalars"]:
            out.setdefault(tag, []).append((e["step"], value, e["wall_time"]))
    return out


def as_float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]
