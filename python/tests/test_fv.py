"""kestrel.Repository: add/delete/modify, 1:N and M:N search into NumPy arrays, persistence, errors; and
kestrel.ProductQuantizer: PQ training, encoding and ADC tables for PQ36 repositories, FAISS export."""
import importlib.util
import threading
import warnings

import numpy as np
import pytest

import kestrel


def unit(rng, n, dim):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_search_finds_what_was_added():
    rng = np.random.default_rng(7)
    vecs = unit(rng, 100, 64)
    with kestrel.Repository(64, metric="cosine") as repo:
        assert repo.add(0, 0, vecs[:60]) == 0 and repo.add(0, 1, vecs[60:]) == 0
        assert repo.add(0, 0, vecs[:1]) == 60  # offset None: appended
        assert len(repo) == 101 and repo.count() == (101, 2) and repo.library_size(0, 0) == 61
        hits = repo.search(vecs[70], k=3)
        assert hits.dtype == kestrel.FV_RESULT_DTYPE and len(hits) == 3
        assert (hits[0]["id0"], hits[0]["id1"], hits[0]["offset"]) == (0, 1, 10)
        assert hits[0]["distance"] == pytest.approx(1.0, abs=1e-5)
        assert (np.diff(hits["distance"]) <= 0).all()
        only = repo.search(vecs[70], k=5, range=(0, 0, 0, 0))
        assert (only["id1"] == 0).all()
        assert len(repo.search(vecs[70], k=5, threshold=0.99)) == 1
        results, counts = repo.search_batch(vecs[[5, 70, 99]], k=2)
        assert results.shape == (3, 2) and list(counts) == [2, 2, 2]
        assert [tuple(r[0])[:3] for r in results] == [(0, 0, 5), (0, 1, 10), (0, 1, 39)]
        repo.delete(0, 1, 10)
        assert repo.search(vecs[70], k=1)[0]["offset"] != 10 or repo.search(vecs[70], k=1)[0]["id1"] != 1
        repo.modify(0, 0, 3, vecs[70])
        assert tuple(repo.search(vecs[70], k=1)[0])[:3] == (0, 0, 3)
        assert repo.delete_range((0, 0, 1, 1)) == 1 and repo.library_size(0, 1) == 0


def test_save_and_load_from_path_and_bytes(tmp_path):
    rng = np.random.default_rng(3)
    vecs = unit(rng, 20, 32)
    with kestrel.Repository(32, storage="f16", metric="ip") as repo:
        repo.add(1, 2, vecs)
        repo.save(tmp_path / "r.kfv")
        assert repo.config["storage"] == "f16" and repo.config["metric"] == "ip"
    for source in (tmp_path / "r.kfv", (tmp_path / "r.kfv").read_bytes()):
        with kestrel.Repository.load(source) as loaded:
            assert len(loaded) == 20 and tuple(loaded.search(vecs[4], k=1)[0])[:3] == (1, 2, 4)
    with pytest.raises(kestrel.CorruptDataError):
        kestrel.Repository.load(b"\0" * 64)
    with pytest.raises(kestrel.NotFoundError):
        kestrel.Repository.load(tmp_path / "missing.kfv")


def test_argument_errors():
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Repository(0)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Repository(8, metric="hamming")
    with kestrel.Repository(8) as repo:
        with pytest.raises(kestrel.InvalidArgumentError, match="whole vectors"):
            repo.add(0, 0, np.zeros(7, np.float32))
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.add(2000, 0, np.ones(8, np.float32))
        with pytest.raises(kestrel.InvalidArgumentError, match="expected 0"):
            repo.add(0, 0, np.ones(8, np.float32), offset=5)
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.add(0, 0, np.full(8, np.nan, np.float32))
        with pytest.raises(kestrel.InvalidArgumentError, match="floating"):
            repo.add(0, 0, np.array(["x"] * 8))
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.add(0, 0, None)
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.search(np.ones(9, np.float32))
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.search(np.ones(8, np.float32), k=0)
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.search_batch(np.ones(8, np.float32))
        with pytest.raises(kestrel.NotFoundError):
            repo.delete(0, 0, 0)
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.search(np.ones(8, np.float32), range=(5, 1, 0, 0))
        assert len(repo.search(np.ones(8, np.float32))) == 0


def test_pq36_repository_takes_records():
    with kestrel.Repository(kind="pq36") as repo:
        codes = np.zeros((3, 36), np.uint8)
        codes[:, 4:] = np.arange(32)
        repo.add(0, 0, codes)
        table = np.zeros((32, 256), np.float32)
        table[0, 0] = 5
        assert len(repo.search(table, k=3)) == 3
        bad = codes.copy()
        bad[0, 0] = 1
        with pytest.raises(kestrel.InvalidArgumentError):
            repo.add(0, 0, bad)


def test_close_waits_for_searches_and_later_use_raises():
    rng = np.random.default_rng(5)
    repo = kestrel.Repository(128)
    repo.add(0, 0, unit(rng, 20000, 128))
    q = unit(rng, 64, 128)
    outcome = []

    def searches():
        try:
            for _ in range(20):
                repo.search_batch(q, k=10)
            outcome.append("done")
        except kestrel.ClosedError:
            outcome.append("closed")
    t = threading.Thread(target=searches)
    t.start()
    repo.close()
    t.join()
    assert outcome and outcome[0] in ("done", "closed")
    with pytest.raises(kestrel.ClosedError):
        repo.search(q[0])
    repo.close()


def clustered(rng, n, dim):
    """n vectors around 16 centres: structure a 256-centroid quantiser can learn."""
    centres = rng.standard_normal((16, dim)).astype(np.float32) * 4
    return (centres[rng.integers(0, 16, n)] + rng.standard_normal((n, dim)).astype(np.float32) * 0.3).astype(
        np.float32)


def test_pq_training_is_deterministic_and_encodes_closely():
    rng = np.random.default_rng(11)
    train = clustered(rng, 512, 64)
    with kestrel.ProductQuantizer(64) as pq, kestrel.ProductQuantizer(64) as again:
        assert pq.dim == 64 and not pq.trained
        pq.train(train, iterations=5, seed=3)
        again.train(train, iterations=5, seed=3)
        assert pq.trained and pq.codebook.shape == (32, 256, 2)
        assert pq.codebook.tobytes() == again.codebook.tobytes()
        again.train(train, iterations=5, seed=4)
        assert pq.codebook.tobytes() != again.codebook.tobytes()
        codes = pq.encode(train[:100])
        assert codes.shape == (100, 36) and codes.dtype == np.uint8 and not codes[:, :4].any()
        error = np.mean(np.sum((pq.decode(codes) - train[:100]) ** 2, axis=1))
        assert error < 0.05 * np.mean(np.sum((train - train.mean(0)) ** 2, axis=1))
        table = pq.compute_table(train[7])
        assert table.shape == (32, 256)
        recon = pq.decode(codes[7:8])[0]
        assert table[np.arange(32), codes[7, 4:]].sum() == pytest.approx(np.sum((train[7] - recon) ** 2), rel=1e-4)
        assert pq.compute_table(train[:3]).shape == (3, 32, 256)
        again.set_codebook(pq.codebook)
        assert np.array_equal(again.encode(train[:100]), codes)


def test_pq36_repository_searches_with_a_trained_quantiser(tmp_path):
    rng = np.random.default_rng(12)
    vecs = rng.standard_normal((300, 32)).astype(np.float32)
    with kestrel.ProductQuantizer(32) as pq, kestrel.Repository(kind="pq36") as repo:
        pq.train(vecs, iterations=4)
        repo.add(0, 0, pq.encode(vecs))
        hits = repo.search(pq.compute_table(vecs[42]), k=3)
        assert hits[0]["offset"] == 42
        results, counts = repo.search_batch(pq.compute_table(vecs[[5, 42]]), k=1)
        assert list(results["offset"][:, 0]) == [5, 42] and list(counts) == [1, 1]
        with pytest.raises(kestrel.NotFoundError):
            repo.pq()
        with pytest.raises(kestrel.NotFoundError):
            repo.export_faiss(tmp_path / "pq.faiss")
        repo.set_pq(pq)
        repo.save(tmp_path / "pq.kfv")
        ids = repo.export_faiss(tmp_path / "pq.faiss")
        assert len(ids) == 300 and (tmp_path / "pq.faiss").stat().st_size > 0
        if importlib.util.find_spec("faiss"):  # python3-faiss: the index FAISS reads finds what Kestrel does
            with warnings.catch_warnings():  # faiss 1.7's loader uses distutils' deprecated LooseVersion
                warnings.simplefilter("ignore", DeprecationWarning)
                import faiss
            index = faiss.read_index(str(tmp_path / "pq.faiss"))
            distances, labels = index.search(vecs[[42]], 1)
            assert index.ntotal == 300 and ids[labels[0, 0]]["offset"] == 42
            assert distances[0, 0] == pytest.approx(hits[0]["distance"], rel=1e-4, abs=1e-5)
    with kestrel.Repository.load(tmp_path / "pq.kfv") as loaded, loaded.pq() as kept:
        assert kept.trained and kept.dim == 32
        assert loaded.search(kept.compute_table(vecs[42]), k=1)[0]["offset"] == 42
        loaded.set_pq(None)
        with pytest.raises(kestrel.NotFoundError):
            loaded.pq()


def test_pq_errors():
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.ProductQuantizer(33)
    pq = kestrel.ProductQuantizer(32)
    vecs = np.ones((300, 32), np.float32)
    with pytest.raises(kestrel.InvalidArgumentError, match="not trained"):
        pq.encode(vecs[:2])
    with pytest.raises(kestrel.InvalidArgumentError):
        pq.codebook
    with pytest.raises(kestrel.InvalidArgumentError, match="256"):
        pq.train(vecs[:100])
    for bad in (np.ones((300, 16), np.float32), None, "vectors", np.ones((2, 300, 32), np.float32)):
        with pytest.raises(kestrel.InvalidArgumentError):
            pq.train(bad)
    nan = vecs.copy()
    nan[3, 3] = np.nan
    with pytest.raises(kestrel.InvalidArgumentError):
        pq.train(nan)
    with pytest.raises(kestrel.InvalidArgumentError):
        pq.train(vecs, iterations=0)
    with pytest.raises(kestrel.InvalidArgumentError):
        pq.set_codebook(np.ones(10, np.float32))
    with pytest.raises(kestrel.InvalidArgumentError):
        pq.decode(np.zeros((2, 35), np.uint8))
    with kestrel.Repository(32) as dense, pytest.raises(kestrel.InvalidArgumentError):
        dense.set_pq(pq)  # untrained, and a dense repository
    pq.close()
    with pytest.raises(kestrel.ClosedError):
        pq.train(vecs)
