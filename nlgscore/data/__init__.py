"""Constants as data: default models and layers, languages, variants, prompts, the Hub ids.

JSON and text files read through ``nlgscore.backend.tables``; the package holds no code.
"""
