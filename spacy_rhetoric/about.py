__title__ = "spacy_rhetoric"
__version__ = "0.7.0"
