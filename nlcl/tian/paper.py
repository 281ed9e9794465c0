"""The settings of Tian (2023) that the book trains with, each declared once, with where it is stated.

A value the paper prints cites its section; a value it does not print says where it comes from
("released code": facebookresearch/luckmatters). Modules take their defaults from here, and a
repository test checks that every chapter's parameter defaults and ``paper`` values agree with them
(a chapter's parameters cell holds literals, as papermill requires).
"""

from __future__ import annotations

__all__ = [
    "SGD_LR",
    "SGD_MOMENTUM",
    "WEIGHT_DECAY",
    "TOKEN_STEPS",
    "TOKEN_BATCH",
    "TOKEN_BETAS",
    "TOKEN_PS",
    "TOKEN_ZETAS",
    "RELEASED_TAU",
    "MNIST_IMAGES",
    "MNIST_BATCH",
    "MNIST_STEPS",
]

#: SGD learning rate of the token and MNIST experiments (Tian 2023, Sec. 5 and App. E.3).
SGD_LR: float = 2e-3
#: SGD momentum (Tian 2023, Sec. 5).
SGD_MOMENTUM: float = 0.9
#: Weight decay (Tian 2023, Sec. 5).
WEIGHT_DECAY: float = 5e-3
#: Minibatches per token run (Tian 2023, Sec. 5: "for 5000 minibatches").
TOKEN_STEPS: int = 5000
#: Batch size of the token runs (Tian 2023, Sec. 5).
TOKEN_BATCH: int = 128
#: Over-parameterizations β of Figs. 9-11 and Table 1 (Tian 2023, Sec. 5.1, App. E.2).
TOKEN_BETAS: tuple[int, ...] = (1, 2, 5, 10)
#: Candidates per receptive field P of Figs. 9-11 and Table 1 (Tian 2023, Sec. 5.1, App. E.2).
TOKEN_PS: tuple[int, ...] = (1, 3, 5, 10)
#: Non-uniformities ζ of Fig. 11 (Tian 2023, App. E.2, Fig. 11).
TOKEN_ZETAS: tuple[float, ...] = (2.0, 5.0, 10.0)
#: InfoNCE temperature τ: not printed in the paper; the released code's value (released code).
RELEASED_TAU: float = 0.1
#: MNIST training images (Tian 2023, App. E.3: "the MNIST dataset consists of 50,000 images").
MNIST_IMAGES: int = 50_000
#: MNIST batch size (Tian 2023, App. E.3).
MNIST_BATCH: int = 8
#: MNIST minibatches (Tian 2023, App. E.3: "We train for 50000 minibatches").
MNIST_STEPS: int = 50_000
