import re
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from fedclust.embed import (
    MODEL_DEFAULTS,
    Cifar10CNN,
    EmbeddingResult,
    MnistCNN,
    build_model,
    import_torchvision,
    read_embeddings,
    train_and_embed,
    write_embeddings,
)

SRC = Path(__file__).resolve().parents[1] / "src" / "fedclust"


def test_torchvision_shim_is_idempotent_and_the_only_import():
    first = import_torchvision()
    assert import_torchvision() is first and first.__name__ == "torchvision"
    v2 = import_torchvision("transforms.v2")
    assert v2 is import_torchvision("transforms.v2") and hasattr(v2, "RandomCrop")
    flipped = v2.RandomHorizontalFlip(p=1.0)(torch.arange(4).view(1, 1, 2, 2))
    assert flipped.flatten().tolist() == [1, 0, 3, 2]
    if torch.version.cuda is None:
        assert hasattr(torch.ops.torchvision, "nms") and hasattr(torch.ops.torchvision, "qnms")
    direct = re.compile(r"^\s*(import torchvision|from torchvision\b)", re.MULTILINE)
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if p.name != "_torchvision.py" and direct.search(p.read_text())]
    assert offenders == []


def test_network_shapes():
    torch.manual_seed(0)
    mnist = build_model("mnist").eval()
    x = torch.randn(5, 1, 28, 28)
    assert mnist.embed(x).shape == (5, 1568) and mnist(x).shape == (5, 10)
    assert isinstance(mnist, MnistCNN) and MnistCNN.embedding_dim == 32 * 7 * 7
    cifar = build_model("cifar10").eval()
    x = torch.randn(5, 3, 32, 32)
    assert cifar.embed(x).shape == (5, 512) and cifar(x).shape == (5, 10)
    assert isinstance(cifar, Cifar10CNN) and Cifar10CNN.embedding_dim == 512


def two_classes(rng, n, shape, *, uint8):
    """An easy problem: class 0 dark, class 1 bright, plus noise."""
    y = np.arange(n) % 2
    X = np.clip(0.25 + 0.5 * y.reshape((-1,) + (1,) * len(shape))
                + 0.15 * rng.standard_normal((n,) + shape), 0, 1)
    return ((X * 255).round().astype(np.uint8) if uint8 else X.astype(np.float32)), y


def test_training_is_deterministic_under_the_seed(rng):
    X, y = two_classes(rng, 48, (32, 32, 3), uint8=True)
    state, deterministic = torch.get_rng_state(), torch.are_deterministic_algorithms_enabled()
    kwargs = dict(epochs=1, batch_size=16, progress=False)
    a = train_and_embed("cifar10", X, y, X[:8], y[:8], X[:10], y[:10], seed=3, **kwargs)
    b = train_and_embed("cifar10", X, y, X[:8], y[:8], X[:10], y[:10], seed=3, **kwargs)
    c = train_and_embed("cifar10", X, y, X[:8], y[:8], X[:10], y[:10], seed=4, **kwargs)
    assert torch.equal(torch.get_rng_state(), state)  # the caller's generator is untouched
    assert torch.are_deterministic_algorithms_enabled() == deterministic  # switch restored
    assert a.embeddings.dtype == np.float32 and a.embeddings.shape == (10, 512)
    np.testing.assert_array_equal(a.embeddings, b.embeddings)
    assert a.history["train_loss"] == b.history["train_loss"]
    assert not np.array_equal(a.embeddings, c.embeddings)
    np.testing.assert_array_equal(a.labels, y[:10])


def test_mnist_network_learns_an_easy_problem(rng):
    X, y = two_classes(rng, 400, (784,), uint8=False)
    result = train_and_embed("mnist", X[:300], y[:300], X[300:], y[300:], epochs=2,
                             batch_size=32, seed=0, progress=False)
    assert result.test_accuracy >= 0.95
    assert result.embeddings.shape == (300, 1568) and result.embeddings.dtype == np.float32
    np.testing.assert_array_equal(result.labels, y[:300])  # default: the training images
    params = result.params
    assert (params["model"], params["epochs"], params["batch_size"], params["seed"]) == (
        "mnist", 2, 32, 0)
    assert params["lr"] == MODEL_DEFAULTS["mnist"]["lr"] and params["optimizer"] == "SGD"
    assert params["augment"] is False and params["n_train"] == 300 and params["n_test"] == 100
    assert params["normalize_mean"][0] == pytest.approx(X[:300].mean(), rel=1e-4)
    assert len(result.history["train_loss"]) == 2
    assert result.history["train_loss"][1] < result.history["train_loss"][0]


def test_cifar_network_learns_an_easy_problem_with_augmentation(rng):
    X, y = two_classes(rng, 240, (32, 32, 3), uint8=True)
    result = train_and_embed("cifar10", X, y, X[200:], y[200:], X[:20], y[:20], epochs=2,
                             batch_size=32, max_train=200, seed=0, progress=False)
    assert result.test_accuracy >= 0.95
    assert result.params["augment"] is True and result.params["n_train"] == 200
    assert result.params["max_train"] == 200 and result.embeddings.shape == (20, 512)


def test_image_layouts_are_equivalent(rng):
    X, y = two_classes(rng, 40, (28, 28), uint8=True)
    kwargs = dict(epochs=1, batch_size=16, seed=1, progress=False)
    flat = train_and_embed("mnist", X.reshape(40, 784), y, X[:5], y[:5], **kwargs)
    square = train_and_embed("mnist", X, y, X[:5].reshape(5, 1, 28, 28), y[:5], **kwargs)
    np.testing.assert_array_equal(flat.embeddings, square.embeddings)
    X, y = two_classes(rng, 40, (32, 32, 3), uint8=True)
    hwc = train_and_embed("cifar10", X, y, X[:5], y[:5], **kwargs)
    chw = train_and_embed("cifar10", X.transpose(0, 3, 1, 2), y, X[:5], y[:5], **kwargs)
    np.testing.assert_array_equal(hwc.embeddings, chw.embeddings)


def test_embeddings_hdf5_round_trip(tmp_path, rng):
    result = EmbeddingResult(
        embeddings=rng.standard_normal((6, 4)).astype(np.float32), labels=np.arange(6),
        test_accuracy=0.875, params={"model": "cifar10", "lr": 0.05, "max_train": None,
                                     "normalize_mean": [0.5, 0.4, 0.3]},
        history={"train_loss": [1.5, 0.5], "epoch_seconds": [3.0, 2.5]})
    path = write_embeddings(tmp_path / "emb/cifar.h5", result,
                            attrs={"data_source": "JPEG re-encoding (lossy approximation)"})
    back = read_embeddings(path)
    np.testing.assert_array_equal(back.embeddings, result.embeddings)
    assert back.embeddings.dtype == np.float32 and back.labels.dtype == np.int64
    np.testing.assert_array_equal(back.labels, result.labels)
    assert back.test_accuracy == 0.875 and back.params == result.params
    assert back.history == result.history
    assert back.attrs["data_source"] == "JPEG re-encoding (lossy approximation)"
    with h5py.File(path) as fh:
        assert fh.attrs["test_accuracy"] == 0.875 and fh.attrs["model"] == "cifar10"
        assert fh.attrs["embedding_dim"] == 4
    with pytest.raises(ValueError, match=r"reserved attribute\(s\) \['test_accuracy'\]"):
        write_embeddings(tmp_path / "x.h5", result, attrs={"test_accuracy": 1.0})
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as fh:
        fh.attrs["format"] = "fedclust.cifar10/1"
    with pytest.raises(ValueError, match=r"other\.h5: not an embeddings file"):
        read_embeddings(other)


def test_bad_arguments_are_named(rng):
    X, y = two_classes(rng, 8, (32, 32, 3), uint8=True)
    cases = [
        (dict(model_name="resnet"), ValueError, r"model_name must be one of \['cifar10', "
                                                r"'mnist'\]; got 'resnet'"),
        (dict(model_name="mnist"), ValueError, r"train_images must have shape \(n, 784\) or "
                                               r"\(n, 28, 28\) or \(n, 1, 28, 28\) for model "
                                               r"'mnist'; got \(8, 32, 32, 3\)"),
        (dict(test_images=X[:, :16]), ValueError, r"test_images must have shape .* got "
                                                  r"\(8, 16, 32, 3\)"),
        (dict(train_labels=y[:5]), ValueError, r"train_labels must be a 1-D array with one "
                                               r"label per image of train_images \(8\)"),
        (dict(test_labels=y + 10), ValueError, r"test_labels must hold labels in 0\.\.9"),
        (dict(test_labels=y.astype(float)), ValueError, r"test_labels must hold integer"),
        (dict(embed_images=X), ValueError, r"give embed_images and embed_labels together"),
        (dict(embed_images=X, embed_labels=y[:3]), ValueError, r"embed_labels must be a 1-D"),
        (dict(train_images=X.astype(np.float32) * np.nan), ValueError, r"train_images contains "
                                                                       r"NaN"),
        (dict(epochs=0), ValueError, r"epochs must be >= 1; got 0"),
        (dict(batch_size=2.5), TypeError, r"batch_size must be an integer"),
        (dict(lr=0.0), ValueError, r"lr must be > 0\.0"),
        (dict(max_train=9), ValueError, r"max_train must be <= 8; got 9"),
        (dict(max_train=1), ValueError, r"at least 2 are needed"),
        (dict(model_name="mnist", train_images=X[:, :28, :28, 0], test_images=X[:, :28, :28, 0],
              augment=True), ValueError, r"augment=True needs 32 x 32 images"),
    ]
    for override, error, message in cases:
        kwargs = dict(model_name="cifar10", train_images=X, train_labels=y, test_images=X,
                      test_labels=y, epochs=1, progress=False)
        kwargs.update(override)
        with pytest.raises(error, match=message):
            train_and_embed(**kwargs)
