"""LM3FE (Luo, Wen, Tao, Gui, Xu; IEEE TIP 25(1):414-427, 2016): large margin multi-modal
multi-task feature extraction, its Tables I-II, Figs. 2-5, the objective per iteration and
claims 1-4 (``mlkit verify lm3fe``).

Every target runs the ``labelled`` protocol of the runner (few labelled samples per class or
label, parameters chosen on a validation part of the test half: see
:class:`mlkit.config.ProtocolSpec`). The paper's NUS-WIDE animal and MIR Flickr data run when
their files are in the data home (``when_present`` datasets); otherwise the real substitutes
in their roles (msrc-v1, mfeat, scene15 for NUS-WIDE; emotions-views for MIR Flickr) do, and
every caption names them as such.

The folder has the shape of every paper's: ``data`` registers the paper's own data
(``emotions-views``), ``renderers`` draws the tables and figures, ``claims`` (with
``claims.yaml``) checks the claims. The methods (LM3FS, LM3FT and the baselines) are
estimators of :mod:`mlkit.methods.multimodal`.
"""

from . import claims, data, renderers  # noqa: F401  (importing registers them)

#: The paper's full reference.
CITATION = ("Y. Luo, Y. Wen, D. Tao, J. Gui, C. Xu. Large margin multi-modal multi-task "
            "feature extraction for image classification. IEEE Transactions on Image "
            "Processing 25(1):414-427, 2016.")
