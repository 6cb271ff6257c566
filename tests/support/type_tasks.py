"""One short task per pattern type, each carrying only that type's injection: the end-to-end tests
of the baselines and of the agents run these."""

TYPE_TASKS = {
    "disguised_ad": "voltcart-mouse-cart",
    "false_hierarchy": "taskflow-ai-addon-cart",
    "preselection": "voltcart-laptop-cart",
    "popup_ad": "threadline-tee-size-s-cart",
    "trick_wording": "taskflow-enterprise-cart",
    "confirm_shaming": "threadline-scarf-cart",
    "fake_social_proof": "bazaarly-blanket-cart",
    "forced_action": "taskflow-storage-checkout",
    "hidden_information": "voltcart-charger-checkout",
}
SELECTOR = ",".join(TYPE_TASKS.values())
