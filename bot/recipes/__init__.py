"""Recipe parity: the official vLLM recipes and SGLang cookbook, rendered for an entry and
compared with the serve command its script starts. Facts only: the rule
(``bot.rules.recipe_mismatch``) and the pull-request summary judge and show them."""
