"""The counting models of Data Logging and Parity Logging (seed 004 sec. 1) that experiment
``multibuffer`` runs beside multibuffering: what one write costs, by hand-counted examples."""

from __future__ import annotations

from vraid.sim.experiment.multibuffer_logging import DataLogging, ParityLogging
from vraid.sim.experiment.multibuffer_sim import geometry_for, run_scheme
from vraid.policies import registry


def _directory(disks: int = 9, blocks: int = 10_000):
    policy = registry.create("placement", "static")
    g, logical = geometry_for(0.0, blocks, disks)
    d = policy.make_directory(g, logical)
    policy.attach(d)
    return d


def test_data_logging_a_new_block_costs_a_read_then_two_writes_a_logged_one_two_writes_at_once():
    d = _directory()
    dl = DataLogging(d, 9, log_blocks=500)
    assert dl.write([0]) == (2, 0)  # read old; then in place and old+new to a log member (different)
    assert dl.log.used == 2 and dl.entries == {0}
    assert dl.write([0]) == (1, 0)  # in place and the new value into its entry, concurrently
    assert dl.log.used == 2  # a rewrite reuses the entry
    # nine consecutive blocks sit on nine members: nine in place, eighteen log blocks spread over the others
    cost, _ = dl.write(list(range(100, 109)))
    assert cost == 1 + 2  # one read each; then each member one in-place write and one log record


def test_data_logging_falls_back_to_raid5_small_writes_when_full_and_cleans():
    d = _directory()
    dl = DataLogging(d, 9, log_blocks=4)  # two entries
    assert dl.write([0]) == (2, 0)
    cost, cleaning = dl.write([9])  # the second entry fills the log: cleaned after the request
    assert cost == 2 and cleaning > 0 and dl.log.cleanings == 1 and not dl.entries and dl.log.used == 0
    dl2 = DataLogging(d, 9, log_blocks=2)  # one entry
    dl2.write([0])  # fills and cleans
    dl2.entries.add(5)  # an entry left in a full log: the next new block cannot get one
    dl2.log.used = 2
    cost, _ = dl2.write([1])
    assert dl2.fallbacks == 1 and cost == 2  # RAID-5 read-modify-write: read data+parity, write both


def test_parity_logging_reads_old_writes_new_and_appends_a_buffer_of_images():
    d = _directory()
    pl = ParityLogging(d, 9, log_blocks=500, buffer=9)
    assert pl.write([0]) == (2, 0)  # read old, write new, the image buffered
    assert len(pl.buffered) == 1 and pl.log.used == 0
    cost, _ = pl.write(list(range(100, 108)))  # eight more images: the buffer's nine appended
    assert pl.log.used == 9 and not pl.buffered
    assert cost == 1 + 2  # one read each; then each member its write, one member also a log block (9 over 9)


def test_parity_logging_cleans_when_the_next_append_would_not_fit():
    d = _directory()
    pl = ParityLogging(d, 9, log_blocks=18, buffer=9)
    pl.write(list(range(9)))
    assert pl.log.used == 9 and pl.log.cleanings == 0
    _, cleaning = pl.write(list(range(9, 18)))
    assert pl.log.cleanings == 1 and pl.log.used == 0 and cleaning > 0 and not pl.stripes


def test_a_log_disk_of_its_own_serialises_data_loggings_log_writes():
    d = _directory()
    dl = DataLogging(d, 9, log_blocks=500, log_disk=True)
    cost, _ = dl.write(list(range(100, 104)))
    assert cost == 1 + 4  # four reads at once; then four log records, one after another, on the log member


def test_the_logging_schemes_run_in_the_access_counting_loop():
    for s in ("data-logging", "parity-logging"):
        o = run_scheme(s, wr=0.5, skew=0.7, requests=600, warmup=100, seed=2)
        assert o["blocks_written"] == o["write_refs"] > 0 and o["write_accesses"] > 0
        assert o["peak_blocks_per_access"] <= 4.5 and o["lw"] == o["pw"] == 0
        assert o["background"] == o["background_paper"] and o["hit_rate"] == 0
