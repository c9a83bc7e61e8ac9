"""LM3FE (Luo, Wen, Tao, Gui, Xu; IEEE TIP 25(1):414-427, 2016): large margin multi-modal
multi-task feature extraction, its Tables I-II, Figs. 2-5, the objective per iteration and
claims 1-4 (``mlkit verify lm3fe``).

Every target runs the ``labelled`` protocol of the runner (few labelled samples per class or
label, parameters chosen on a validation part of the test half: see
:class:`mlkit.config.ProtocolSpec`). The paper's NUS-WIDE animal and MIR Flickr data run when
their files are in the data home (``when_present`` datasets); otherwise the real substitutes
in their roles (msrc-v1, mfeat, scene15 for NUS-WIDE; emotions-views for MIR Flickr) do, and
every caption names them as such. ``renderers`` draws the tables and figures, ``claims`` the
claims.
"""

from . import claims, renderers  # noqa: F401  (importing registers them)
