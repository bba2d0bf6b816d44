"""The panels of ``vraid top``: pure functions from a snapshot dict to rich renderables.

A snapshot is what :meth:`vraid.engine.host.live.LiveState.snapshot` returns (the ``snapshot`` control
command), with ``rates`` added by the viewer (:func:`vraid.engine.host.live.derive_rates`). Nothing here
reads a clock, a socket or the terminal, so the same snapshot always draws the same text;
tests/test_top_panels.py keeps rendered panels as snapshot files.

Panels (docs/top.md says how to read each), one module each:

* :mod:`.plan`: :func:`plan_panel`, the latest destage plan of seed 000: Z (D/C/E), the basic
  rxw-matrix M and the transformed M (operations the CT inserted are highlighted and marked
  ``*``), the member requests of each column, and Table I's legend;
* :mod:`.watermarks`: :func:`watermark_panel`, cache occupancy over time with the HWM and LWM
  lines and the times destages were in flight;
* :mod:`.members`: :func:`members_panel`, per member disk: state, queue depth, busy fraction,
  requests/s, contiguous vs fragmented requests, and a rebuild's progress;
* :mod:`.counters`: :func:`counters_panel`, hit and overwrite ratios, throughput, response-time
  percentiles;
* :mod:`.extras`: :func:`extras_panel`, the controller's prefetch row (read cache, MSP's SC, seed
  001's losses: :func:`prefetch_summary`), host read-ahead windows and log-disk fill, only when
  a snapshot has them;
* :mod:`.log_disk`: :func:`log_panel`, the log disk of seed 002;
* :mod:`.placement`: :func:`placement_panel`, the write buffers and cleaner of seed 004;
* :mod:`.screen`: :func:`header`, :func:`footer` and :func:`frame`, the whole screen;
* :mod:`.layout`: :func:`fit`, the live view's frame sized to the terminal;
* :mod:`.text`: the percentages, rates, durations and bars they share.
"""

from .counters import counter_rows, counters_panel
from .extras import EXTRA_KEYS, extras_panel, has_extras, log_disk_row, placement_row, prefetch_summary
from .layout import CHART_MAX, PLAN_ROWS_MAX, fit
from .log_disk import log_panel
from .members import MEMBER_STYLE, members_panel, rebuild_line
from .placement import placement_panel
from .plan import INSERTED_STYLE, LEGEND, STATE_STYLE, legend_text, plan_panel, plan_table
from .screen import KEYS_ENGINE, KEYS_SIM, footer, frame, header
from .watermarks import occupancy_chart, watermark_panel

__all__ = [
    "CHART_MAX", "EXTRA_KEYS", "INSERTED_STYLE", "KEYS_ENGINE", "KEYS_SIM", "LEGEND", "MEMBER_STYLE",
    "PLAN_ROWS_MAX", "STATE_STYLE", "counter_rows", "counters_panel", "extras_panel", "fit", "footer",
    "frame", "has_extras", "header", "legend_text", "log_disk_row", "log_panel", "members_panel",
    "occupancy_chart", "placement_panel", "placement_row", "plan_panel", "plan_table", "prefetch_summary",
    "rebuild_line", "watermark_panel",
]
