"""The per-request table as Parquet, in constant memory: the run streams its CSV (the Rust
CsvRecordWriter, any run length), which is then read block by block and written row group by
row group. The columns and their order are the CSV's; types are fixed here (not inferred per
block, which could differ between blocks)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

# The CSV's columns (metrics/csv.rs: run, scheduler, RECORD_COLUMNS) and their Arrow types (pyarrow
# factory names).
REQUEST_COLUMNS = [
    ("run", "int32"), ("scheduler", "string"), ("req_id", "uint64"), ("pid", "uint32"), ("group", "uint32"),
    ("op", "string"), ("sync", "bool_"), ("start_sector", "uint64"), ("size_sectors", "uint32"), ("bios", "uint32"),
    ("issue_ns", "uint64"), ("insert_ns", "uint64"), ("dispatch_ns", "uint64"), ("start_ns", "uint64"),
    ("complete_ns", "uint64"), ("seek_cylinders", "uint32"), ("seek_ns", "uint64"), ("rotation_ns", "uint64"),
    ("transfer_ns", "uint64"), ("cache_hit", "bool_"),
]
# CSV bytes read per block (each block becomes one row group): memory stays near this.
BLOCK_BYTES = 16 << 20


def csv_to_parquet(csv_path: Union[str, Path], parquet_path: Union[str, Path]) -> int:
    """Converts a `--requests-csv` file to Parquet block by block; returns the rows written. The
    Parquet file is written beside its final name and renamed when complete."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    schema = pa.schema([(name, getattr(pa, typ)()) for name, typ in REQUEST_COLUMNS])
    reader = pacsv.open_csv(
        str(csv_path),
        read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES),
        convert_options=pacsv.ConvertOptions(column_types=schema, strings_can_be_null=False),
    )
    if reader.schema.names != schema.names:
        raise ValueError(f"{csv_path}: unexpected columns {reader.schema.names} (expected {schema.names})")
    parquet_path = Path(parquet_path)
    partial = parquet_path.with_name(parquet_path.name + ".partial")
    rows = 0
    try:
        with pq.ParquetWriter(str(partial), reader.schema, compression="zstd") as writer:
            for batch in reader:
                writer.write_batch(batch)
                rows += batch.num_rows
        os.replace(partial, parquet_path)
    finally:
        if partial.exists():
            partial.unlink()
    return rows
