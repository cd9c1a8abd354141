"""The choices and defaults of ``mlx26 wifi-pose`` (standard library only; the CLI imports this at module level)."""

CHIPS = ("intel5300", "atheros")  # wired to csiread (its Nexmon, ESP32, PicoScenes parsers are not, yet)
MODELS = ("mamba", "transformer")  # WiFi-Mamba (reconstruction) | PiW3D-style transformer baseline
MATCHINGS = ("hungarian", "greedy")  # scipy's linear_sum_assignment | PiW3D's greedy min-distance matching
PRESETS = ("tiny", "small")
AXES = ("link", "ant", "sub", "pkt")  # independent radio links, antennas sharing one clock, subcarriers, packets
PIW3D_LAYOUT = "link-ant-sub-pkt"  # PiW3D's csi_out: 3 Rx NICs x 3 antennas x 30 subcarriers x 20 packets
PIW3D_SHAPE = (3, 3, 30, 20)
JOINTS = 14  # PiW3D's keypoint set (N, 14, 3), metres
PCK_MM = (50, 100, 150)
# Intel 5300 (IWL5300) reports 30 of the 56 subcarriers of a 20 MHz channel (802.11n grouping Ng=2).
INTEL5300_SUBCARRIERS = tuple(list(range(-28, -1, 2)) + [-1] + list(range(1, 28, 2)) + [28])
SUBCARRIER_SPACING_HZ = 312_500.0
