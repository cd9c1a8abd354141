"""quantize-moe: TileQ shared low-rank corrections for mixture-of-experts weights."""
