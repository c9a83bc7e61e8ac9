"""The SMO steps of :func:`mlkit.methods.mi.misvm.group_slack_svm`, compiled (and the
gather of MI-SVM's Gram blocks from the instance kernel).

Andrews et al.'s bag-slack SVM dual (NIPS 2002, Sec. 3: one slack per negative bag) is
solved by pair steps, each O(n) work in a fixed number of passes over the examples (the
working pair's choice, the score update, the two changed groups' masks). In numpy that is
some fifteen calls per step, whose overheads dominate for the problem sizes of MI-SVM's
witness iterations; here the same passes are one compiled loop (numba, ``fastmath`` off, so
every element is computed by the same IEEE operations in the same order as numpy would:
the iterates are those of the numpy formulation, bit for bit).

The arg-max / arg-min searches are numpy's: the first index of the largest (smallest)
value, the first NaN when there is one, index 0 of an all-``-inf`` (``+inf``) candidate set;
the group maxima and minima propagate NaN as ``np.maximum.reduceat`` does.
"""

import numpy as np
from numba import njit

__all__ = ["smo_steps", "gather_block"]


#: side of the square tiles :func:`gather_block` copies one at a time
_TILE = 64


@njit(cache=True)
def gather_block(src, idx, out, offset):
    """``out[offset:, offset:] = src[np.ix_(idx, idx)]`` (a copy: the same numbers), in
    square tiles of ``_TILE`` rows and columns, each written column by column: a tile
    touches a few dozen rows of ``src`` and columns of ``out`` whatever their layout, where
    a whole column of a row-major ``src`` (the binary problems' kernel, ~100 MB on MUSK2)
    falls on a different memory page at every element (3-4x slower)."""
    m = idx.shape[0]
    for c0 in range(0, m, _TILE):
        c1 = min(c0 + _TILE, m)
        for r0 in range(0, m, _TILE):
            r1 = min(r0 + _TILE, m)
            for c in range(c0, c1):
                col = idx[c]
                for r in range(r0, r1):
                    out[offset + r, offset + c] = src[idx[r], col]


@njit(cache=True)
def _full_members(room, group_of):
    """The examples of the groups at their cap (``~room``, ascending) and the start of every
    group's run among them."""
    n = room.shape[0]
    members = np.empty(n, dtype=np.int64)
    starts = np.empty(n, dtype=np.int64)
    n_members = 0
    n_starts = 0
    for k in range(n):
        if not room[k]:
            if n_members == 0 or group_of[k] != group_of[members[n_members - 1]]:
                starts[n_starts] = n_members
                n_starts += 1
            members[n_members] = k
            n_members += 1
    return members[:n_members], starts[:n_starts]


@njit(cache=True)
def smo_steps(Kc, y, diag, score, a, sums, group_start, group_of, group_y, room, active,
              grow, shrink, positive, is_full, C, eps, tol, max_iter):
    """Run up to ``max_iter`` SMO steps from the state given, in place.

    ``Kc`` is the kernel (column-major: every step reads two columns), ``score`` the
    examples' ``-y_i g_i`` (g = Q a - 1 the dual gradient), ``a`` the dual variables,
    ``sums`` each group's sum of them, ``room`` / ``active`` / ``grow`` / ``shrink`` the
    feasibility masks (the group is below its cap; a_i > eps; a_i += y_i t is feasible;
    a_j -= y_j t is feasible), ``is_full`` each group at its cap. Returns whether the largest
    violation of the pair chosen fell below ``tol`` (or no pair was feasible).
    """
    n = y.shape[0]
    n_shrink = 0
    n_full = 0
    for k in range(n):
        if shrink[k]:
            n_shrink += 1
    for g in range(is_full.shape[0]):
        if is_full[g]:
            n_full += 1
    members, m_start = _full_members(room, group_of)
    dirty = False
    for _ in range(max_iter):
        best_viol = -np.inf
        pi = -1
        pj = -1
        # i = argmax over grow of score (np.argmax of where(grow, score, -inf))
        i = 0
        top = -np.inf
        for k in range(n):
            if grow[k]:
                x = score[k]
                if x > top:
                    top = x
                    i = k
                elif x != x:
                    i = k
                    break
        if grow[i] and n_shrink:
            # j by libsvm's second-order rule: the largest (score_i - score_j)^2 / eta over
            # the shrinkable j with a positive gap
            si = score[i]
            di = diag[i]
            j = -1
            best_ratio = -np.inf
            ratio_nan = False
            low = np.inf
            low_nan = False
            for k in range(n):
                if shrink[k]:
                    sk = score[k]
                    if not low_nan:
                        if sk != sk:
                            low = sk
                            low_nan = True
                        elif sk < low:
                            low = sk
                    gap = si - sk
                    if gap > 0 and not ratio_nan:
                        eta = (di + diag[k]) - 2.0 * Kc[k, i]
                        if eta < 1e-12:
                            eta = 1e-12
                        ratio = (gap * gap) / eta
                        if ratio > best_ratio:
                            best_ratio = ratio
                            j = k
                        elif ratio != ratio:
                            j = k
                            ratio_nan = True
            if j >= 0:
                best_viol = si - score[j]
                pi = i
                pj = j
            else:
                best_viol = si - low
        if n_full:
            # within a full group (one label): one member up in its +y direction, another
            # down; the most violating pair over the groups at their cap, the first such
            # group on ties (np.argmax over the groups' violations)
            if dirty:
                members, m_start = _full_members(room, group_of)
                dirty = False
            n_seg = m_start.shape[0]
            n_members = members.shape[0]
            v_best = -np.inf
            v_nan = False
            up_best = 0
            down_best = 0
            for s in range(n_seg):
                lo_ = m_start[s]
                hi_ = m_start[s + 1] if s + 1 < n_seg else n_members
                up_v = -np.inf
                up_p = lo_
                up_nan = False
                down_v = np.inf
                down_p = lo_
                down_nan = False
                for q in range(lo_, hi_):
                    m = members[q]
                    sm = score[m]
                    if not up_nan:
                        x = sm if (positive[m] or active[m]) else -np.inf
                        if x > up_v:
                            up_v = x
                            up_p = q
                        elif x != x:
                            up_v = x
                            up_p = q
                            up_nan = True
                    if not down_nan:
                        x = np.inf if (positive[m] and not active[m]) else sm
                        if x < down_v:
                            down_v = x
                            down_p = q
                        elif x != x:
                            down_v = x
                            down_p = q
                            down_nan = True
                viol = up_v - down_v
                if s == 0 or (not v_nan and (viol > v_best or viol != viol)):
                    v_best = viol
                    up_best = up_p
                    down_best = down_p
                    v_nan = viol != viol
            if n_seg and v_best > best_viol:
                best_viol = v_best
                pi = members[up_best]
                pj = members[down_best]
        if pi < 0 or best_viol < tol:
            return True
        i = pi
        j = pj
        eta = (diag[i] + diag[j]) - 2.0 * Kc[j, i]
        if 1e-12 > eta:
            eta = 1e-12
        t = best_viol / eta
        gi = group_of[i]
        gj = group_of[j]
        same = gi == gj
        # bounds: a_i changes by y_i t, a_j by -y_j t
        sign = y[i]
        if sign < 0:
            if a[i] < t:
                t = a[i]
        elif not same:
            bound = C - sums[group_of[i]]
            if bound < t:
                t = bound
        sign = -y[j]
        if sign < 0:
            if a[j] < t:
                t = a[j]
        elif not same:
            bound = C - sums[group_of[j]]
            if bound < t:
                t = bound
        if 0.0 > t:
            t = 0.0
        x = a[i] + y[i] * t
        a[i] = 0.0 if 0.0 > x else x
        x = a[j] - y[j] * t
        a[j] = 0.0 if 0.0 > x else x
        if same:
            sums[gi] += 0.0
        else:
            sums[gi] += y[i] * t
            sums[gj] -= y[j] * t
        for k in range(n):
            score[k] -= t * (Kc[k, i] - Kc[k, j])     # -y (g + t y (Ki - Kj)), y = +-1
        active[i] = a[i] > eps
        active[j] = a[j] > eps
        for r in range(1 if same else 2):
            gr = gi if r == 0 else gj
            lo_ = group_start[gr]
            hi_ = group_start[gr + 1]
            has_room = (C - sums[gr]) > eps
            for k in range(lo_, hi_):
                room[k] = has_room
            if has_room == is_full[gr]:        # the group's cap state changed
                dirty = True
                is_full[gr] = not has_room
                n_full += -1 if has_room else 1
            for k in range(lo_, hi_):
                if shrink[k]:
                    n_shrink -= 1
            if group_y[gr] > 0:
                for k in range(lo_, hi_):
                    grow[k] = has_room
                    shrink[k] = active[k]
            else:
                for k in range(lo_, hi_):
                    grow[k] = active[k]
                    shrink[k] = has_room
            for k in range(lo_, hi_):
                if shrink[k]:
                    n_shrink += 1
    return False
