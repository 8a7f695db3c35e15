import torch

from spacy_rhetoric.parallelism.linker import (
    KIND_END,
    KIND_FIRST,
    KIND_INSIDE,
    KIND_LATER,
    KIND_OUTSIDE,
    BranchLinker,
    lexical_features,
    read_branches,
)

# labels: 0 O, 1 B, 2 B-*, 3 I, 4 E
KINDS = [KIND_OUTSIDE, KIND_FIRST, KIND_LATER, KIND_INSIDE, KIND_END]


def test_read_branches():
    #        B  I  E  O  B* E  B* O  I
    path = [1, 3, 4, 0, 2, 4, 2, 0, 3]
    assert read_branches(path, KINDS) == [
        (0, 3, False, -1),
        (4, 6, True, -1),
        (6, 7, True, -1),
        (8, 9, False, -1),  # an orphan inside tag opens an unlinked branch
    ]
    assert read_branches([], KINDS) == []


def test_lexical_features():
    keys = [(1, 10), (2, 20), (9, 9), (1, 10), (3, 20)]
    # branches (0, 2) and (3, 5): forms {1,2} vs {1,3}; endings {10,20} vs {10,20}
    features = lexical_features(keys, (3, 5, True, -1), (0, 2, False, -1))
    assert features == [1 / 3, 1.0, 1.0, 0.0, 1.0, 0.0]


def test_linker_learns_and_predicts_antecedents():
    torch.manual_seed(0)
    linker = BranchLinker(n_encoded=4, width=8, max_back=3)
    encoded = torch.randn(1, 8, 4)
    keys = [[(i % 3, i % 2) for i in range(8)]]
    # branches: 0 first; 1 first; 2 later -> antecedent 0
    gold = [[[(0, 2, False, -1), (2, 4, False, -1), (4, 6, True, 0)]]]
    optimizer = torch.optim.Adam(linker.parameters(), lr=0.05)
    first = linker.loss(encoded, gold, keys).item()
    for _ in range(30):
        optimizer.zero_grad()
        loss = linker.loss(encoded, gold, keys)
        loss.backward()
        optimizer.step()
    assert loss.item() < first / 10
    unlinked = [[[(0, 2, False, -1), (2, 4, False, -1), (4, 6, True, -1)]]]
    assert linker.predict(encoded, unlinked, keys)[0][0][2] == (4, 6, True, 0)
    # a later branch with no earlier branch keeps no antecedent
    assert linker.predict(encoded, [[[(0, 2, True, -1)]]], keys)[0][0][0] == (0, 2, True, -1)
