#!/usr/bin/env python3
"""A person with a phone's browser on `p2p share`'s page: headless Chromium driven by Selenium.

usage: browser_share.py URL PIN DOWNLOAD_DIR SCREENSHOT_PREFIX

Opens URL in a phone-sized viewport (390x844, emulated), types a wrong PIN and reads the error the page shows, then the
right PIN, reads the listed files (name and size as shown), clicks every file's link and waits until each
download is complete in DOWNLOAD_DIR. Screenshots: PREFIX-pin.png (the PIN form) and PREFIX-list.png (the
list). Prints one JSON object: {"wrong_pin_error", "title", "listed": [[name, size]...], "downloaded": [...]}.
Exits 1 with a message on stderr when a step does not happen within its time.
"""
import json
import os
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def browser(download_dir):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=390,844", "--no-first-run", "--no-default-browser-check"):
        options.add_argument(argument)
    # A phone's viewport (headless windows are at least 500 px wide): 390x844 CSS pixels at 2x.
    options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0}})
    options.add_experimental_option("prefs", {
        "download.default_directory": download_dir,
        "download.prompt_for_download": False,
        "profile.default_content_setting_values.automatic_downloads": 1,
    })
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": download_dir})
    return driver


def main(url, pin, download_dir, shots):
    driver = browser(download_dir)
    wait = WebDriverWait(driver, 20)
    result = {}
    try:
        driver.get(url)
        field = wait.until(EC.element_to_be_clickable((By.ID, "pin")))
        driver.save_screenshot(shots + "-pin.png")
        wrong = "0" if pin != "0" else "1"
        field.send_keys(wrong + pin[1:] if len(pin) > 1 else wrong)
        driver.find_element(By.ID, "open").click()
        wait.until(lambda d: d.find_element(By.ID, "error").text.strip() != "")
        result["wrong_pin_error"] = driver.find_element(By.ID, "error").text
        result["list_hidden_after_wrong_pin"] = not driver.find_element(By.ID, "files").is_displayed()

        field.clear()
        field.send_keys(pin)
        driver.find_element(By.ID, "open").click()
        wait.until(EC.visibility_of_element_located((By.ID, "files")))
        result["title"] = driver.find_element(By.ID, "title").text
        items = driver.find_elements(By.CSS_SELECTOR, "#list li")
        result["listed"] = [[item.find_element(By.CSS_SELECTOR, "a").text, item.find_element(By.CSS_SELECTOR, ".size").text] for item in items]
        driver.save_screenshot(shots + "-list.png")

        for link in driver.find_elements(By.CSS_SELECTOR, "a.file"):
            link.click()
            time.sleep(0.2)  # one click at a time, as a person taps; the downloads themselves are waited for below
        expected = len(items)

        def complete(_):
            names = [n for n in os.listdir(download_dir) if not n.endswith(".crdownload") and not n.startswith(".")]
            busy = [n for n in os.listdir(download_dir) if n.endswith(".crdownload")]
            return names if len(names) >= expected and not busy else False
        try:
            result["downloaded"] = sorted(WebDriverWait(driver, 60, poll_frequency=0.2).until(complete))
        except TimeoutException:
            result["downloaded"] = sorted(os.listdir(download_dir))
            print(json.dumps(result))
            print("the downloads did not all complete within 60 s", file=sys.stderr)
            return 1
        print(json.dumps(result))
        return 0
    except TimeoutException as error:
        result["page"] = driver.page_source[-2000:]
        print(json.dumps(result))
        print(f"a step did not happen in time: {error}", file=sys.stderr)
        return 1
    finally:
        driver.quit()


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
