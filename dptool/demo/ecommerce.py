"""Deterministic synthetic e-commerce data shaped like the public Olist Brazilian E-commerce dataset.

The tables and columns are Olist's (including its "lenght" misspelling), and the distributions follow
Olist closely enough that the demo's business rules change metric answers: delivery outliers over 60
days, deliveries exactly one day after the promise, a visible payment-approval lag, 3-star reviews,
e-mail addresses in review comments, "not_defined" payments, canceled orders with items.

Only the standard library is used and one ``random.Random(seed)`` drives every draw, in a fixed order,
so the same (scale, seed) always gives byte-identical CSV files.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from dptool.demo.sink import CsvSink, Emit
from dptool.demo.weighted import Weighted, weighted

TABLES: tuple[str, ...] = (
    "olist_orders_dataset",
    "olist_order_items_dataset",
    "olist_order_payments_dataset",
    "olist_order_reviews_dataset",
    "olist_customers_dataset",
    "olist_sellers_dataset",
    "olist_products_dataset",
    "olist_product_category_name_translation",
)

COLUMNS: dict[str, tuple[str, ...]] = {
    "olist_orders_dataset": (
        "order_id", "customer_id", "order_status", "order_purchase_timestamp", "order_approved_at",
        "order_delivered_carrier_date", "order_delivered_customer_date", "order_estimated_delivery_date",
    ),
    "olist_order_items_dataset": (
        "order_id", "order_item_id", "product_id", "seller_id", "shipping_limit_date", "price",
        "freight_value",
    ),
    "olist_order_payments_dataset": (
        "order_id", "payment_sequential", "payment_type", "payment_installments", "payment_value",
    ),
    "olist_order_reviews_dataset": (
        "review_id", "order_id", "review_score", "review_comment_title", "review_comment_message",
        "review_creation_date", "review_answer_timestamp",
    ),
    "olist_customers_dataset": (
        "customer_id", "customer_unique_id", "customer_zip_code_prefix", "customer_city", "customer_state",
    ),
    "olist_sellers_dataset": ("seller_id", "seller_zip_code_prefix", "seller_city", "seller_state"),
    "olist_products_dataset": (
        "product_id", "product_category_name", "product_name_lenght", "product_description_lenght",
        "product_photos_qty", "product_weight_g", "product_length_cm", "product_height_cm",
        "product_width_cm",
    ),
    "olist_product_category_name_translation": ("product_category_name", "product_category_name_english"),
}

# ---------------------------------------------------------------------------------------------------
# Reference data
# ---------------------------------------------------------------------------------------------------

# state: (customer share %, Olist seller count, region, mean days purchase -> delivery, Olist late share).
# The late shares are Olist's per state; they average to ~8% over the customer shares.
_STATES: dict[str, tuple[float, int, str, float, float]] = {
    "AC": (0.08, 1, "N", 21.0, 0.040),
    "AL": (0.40, 0, "NE", 24.0, 0.240),
    "AM": (0.15, 1, "N", 26.0, 0.040),
    "AP": (0.08, 0, "N", 26.7, 0.045),
    "BA": (3.40, 19, "NE", 18.9, 0.140),
    "CE": (1.30, 13, "NE", 20.8, 0.150),
    "DF": (2.10, 30, "CO", 12.5, 0.070),
    "ES": (2.00, 23, "SE", 15.3, 0.120),
    "GO": (2.00, 40, "CO", 15.2, 0.080),
    "MA": (0.75, 1, "NE", 21.1, 0.200),
    "MG": (12.0, 244, "SE", 11.5, 0.056),
    "MS": (0.70, 5, "CO", 15.2, 0.115),
    "MT": (0.90, 4, "CO", 17.6, 0.068),
    "PA": (1.00, 1, "N", 23.3, 0.125),
    "PB": (0.50, 6, "NE", 19.9, 0.110),
    "PE": (1.70, 9, "NE", 18.0, 0.108),
    "PI": (0.50, 1, "NE", 18.9, 0.160),
    "PR": (5.00, 349, "S", 11.5, 0.050),
    "RJ": (13.0, 171, "SE", 14.8, 0.135),
    "RN": (0.50, 5, "NE", 18.8, 0.108),
    "RO": (0.25, 2, "N", 18.9, 0.030),
    "RR": (0.05, 0, "N", 28.9, 0.120),
    "RS": (5.50, 129, "S", 14.8, 0.072),
    "SC": (3.70, 190, "S", 14.5, 0.100),
    "SE": (0.35, 2, "NE", 21.0, 0.170),
    "SP": (42.0, 1849, "SE", 8.3, 0.059),
    "TO": (0.28, 0, "N", 17.2, 0.128),
}

# Freight distance class between regions (same state is 0, same region 1).
_NEAR_REGIONS = {("SE", "S"), ("SE", "CO"), ("S", "CO"), ("CO", "N"), ("SE", "NE"), ("NE", "N")}

# state: [(city, relative weight, first zip prefix, last zip prefix)]. Names are lowercase and
# unaccented like Olist's; the apostrophe cities are over-weighted so that each one shows up at scale 1.
_CITIES: dict[str, list[tuple[str, float, int, int]]] = {
    "AC": [("rio branco", 80, 69900, 69923), ("cruzeiro do sul", 20, 69980, 69981)],
    "AL": [("maceio", 60, 57000, 57099), ("arapiraca", 14, 57300, 57319),
           ("olho d'agua das flores", 12, 57442, 57442), ("palmeira dos indios", 7, 57600, 57609),
           ("rio largo", 7, 57100, 57109)],
    "AM": [("manaus", 85, 69000, 69099), ("itacoatiara", 6, 69100, 69109),
           ("parintins", 5, 69150, 69159), ("manacapuru", 4, 69400, 69409)],
    "AP": [("macapa", 80, 68900, 68924), ("santana", 20, 68925, 68929)],
    "BA": [("salvador", 55, 40000, 42499), ("feira de santana", 10, 44000, 44099),
           ("vitoria da conquista", 7, 45000, 45099), ("lauro de freitas", 7, 42700, 42710),
           ("camacari", 5, 42800, 42849), ("itabuna", 4, 45600, 45612), ("ilheus", 4, 45650, 45662),
           ("dias d'avila", 3, 42850, 42850), ("juazeiro", 5, 48900, 48909)],
    "CE": [("fortaleza", 70, 60000, 61599), ("caucaia", 8, 61600, 61659), ("maracanau", 7, 61900, 61939),
           ("juazeiro do norte", 8, 63000, 63059), ("sobral", 7, 62000, 62099)],
    "DF": [("brasilia", 80, 70000, 71999), ("taguatinga", 6, 72000, 72199), ("ceilandia", 4, 72200, 72299),
           ("gama", 3, 72400, 72499), ("sobradinho", 3, 73000, 73099), ("guara", 4, 71000, 71099)],
    "ES": [("vila velha", 25, 29100, 29129), ("vitoria", 25, 29000, 29099), ("serra", 18, 29160, 29179),
           ("cariacica", 12, 29140, 29159), ("cachoeiro de itapemirim", 8, 29300, 29314),
           ("linhares", 6, 29900, 29914), ("guarapari", 6, 29200, 29224)],
    "GO": [("goiania", 55, 74000, 74899), ("aparecida de goiania", 12, 74900, 74999),
           ("anapolis", 10, 75000, 75149), ("rio verde", 6, 75900, 75909), ("luziania", 5, 72800, 72869),
           ("valparaiso de goias", 4, 72870, 72879), ("catalao", 5, 75700, 75709),
           ("sao joao d'alianca", 3, 73760, 73760)],
    "MA": [("sao luis", 65, 65000, 65099), ("imperatriz", 15, 65900, 65919), ("timon", 10, 65630, 65639),
           ("caxias", 10, 65600, 65609)],
    "MG": [("belo horizonte", 45, 30000, 31999), ("contagem", 8, 32000, 32399),
           ("juiz de fora", 10, 36000, 36099), ("uberlandia", 9, 38400, 38415), ("betim", 5, 32600, 32699),
           ("montes claros", 4, 39400, 39409), ("uberaba", 5, 38000, 38099),
           ("governador valadares", 3, 35000, 35099), ("ipatinga", 3, 35160, 35164),
           ("pocos de caldas", 3, 37700, 37719), ("divinopolis", 3, 35500, 35509),
           ("sete lagoas", 3, 35700, 35704), ("varginha", 2, 37010, 37026)],
    "MS": [("campo grande", 70, 79000, 79129), ("dourados", 15, 79800, 79849),
           ("tres lagoas", 9, 79600, 79649), ("corumba", 6, 79300, 79339)],
    "MT": [("cuiaba", 50, 78000, 78099), ("varzea grande", 15, 78110, 78159),
           ("rondonopolis", 12, 78700, 78749), ("sinop", 9, 78550, 78559),
           ("tangara da serra", 7, 78300, 78309), ("mirassol d'oeste", 7, 78280, 78280)],
    "PA": [("belem", 60, 66000, 66999), ("ananindeua", 14, 67000, 67199), ("santarem", 8, 68000, 68099),
           ("maraba", 6, 68500, 68519), ("castanhal", 6, 68740, 68749), ("pau d'arco", 6, 68545, 68545)],
    "PB": [("joao pessoa", 65, 58000, 58099), ("campina grande", 20, 58400, 58439),
           ("santa rita", 8, 58300, 58309), ("patos", 7, 58700, 58709)],
    "PE": [("recife", 55, 50000, 52999), ("jaboatao dos guararapes", 12, 54000, 54499),
           ("olinda", 10, 53000, 53299), ("paulista", 8, 53400, 53499), ("caruaru", 8, 55000, 55099),
           ("petrolina", 7, 56300, 56339)],
    "PI": [("teresina", 75, 64000, 64099), ("parnaiba", 10, 64200, 64219), ("picos", 8, 64600, 64609),
           ("floriano", 7, 64800, 64809)],
    "PR": [("curitiba", 45, 80000, 82999), ("londrina", 12, 86000, 86099), ("maringa", 10, 87000, 87119),
           ("ponta grossa", 6, 84000, 84099), ("cascavel", 6, 85800, 85829),
           ("sao jose dos pinhais", 6, 83000, 83099), ("foz do iguacu", 5, 85850, 85869),
           ("colombo", 5, 83400, 83419), ("guarapuava", 5, 85000, 85099)],
    "RJ": [("rio de janeiro", 60, 20000, 23799), ("niteroi", 9, 24000, 24399),
           ("nova iguacu", 5, 26000, 26099), ("sao goncalo", 6, 24400, 24799),
           ("duque de caxias", 5, 25000, 25299), ("petropolis", 4, 25600, 25779),
           ("campos dos goytacazes", 3, 28000, 28099), ("volta redonda", 3, 27200, 27299),
           ("macae", 2, 27900, 27999), ("teresopolis", 2, 25950, 25999), ("belford roxo", 2, 26100, 26199)],
    "RN": [("natal", 70, 59000, 59139), ("parnamirim", 12, 59140, 59159), ("mossoro", 12, 59600, 59649),
           ("caico", 6, 59300, 59309)],
    "RO": [("porto velho", 45, 76800, 76834), ("ji-parana", 12, 76900, 76909),
           ("ariquemes", 8, 76870, 76879), ("vilhena", 8, 76980, 76989), ("cacoal", 7, 76960, 76969),
           ("alvorada d'oeste", 10, 76930, 76930), ("machadinho d'oeste", 10, 76868, 76868)],
    "RR": [("boa vista", 90, 69300, 69339), ("rorainopolis", 10, 69375, 69375)],
    "RS": [("porto alegre", 45, 90000, 91999), ("caxias do sul", 10, 95000, 95099),
           ("canoas", 8, 92000, 92499), ("pelotas", 7, 96000, 96099), ("santa maria", 7, 97000, 97119),
           ("novo hamburgo", 6, 93300, 93599), ("gravatai", 5, 94000, 94199),
           ("sao leopoldo", 4, 93000, 93199), ("passo fundo", 4, 99000, 99099),
           ("viamao", 4, 94400, 94499)],
    "SC": [("florianopolis", 25, 88000, 88099), ("joinville", 18, 89200, 89239),
           ("blumenau", 15, 89000, 89099), ("sao jose", 10, 88100, 88124), ("itajai", 7, 88300, 88319),
           ("criciuma", 7, 88800, 88819), ("chapeco", 6, 89800, 89816),
           ("balneario camboriu", 6, 88330, 88339), ("palhoca", 5, 88130, 88139),
           ("herval d'oeste", 2, 89610, 89610)],
    "SE": [("aracaju", 75, 49000, 49099), ("nossa senhora do socorro", 10, 49160, 49169),
           ("lagarto", 8, 49400, 49409), ("itabaiana", 7, 49500, 49509)],
    "SP": [("sao paulo", 370, 1000, 5999), ("guarulhos", 30, 7000, 7399), ("campinas", 35, 13000, 13139),
           ("sao bernardo do campo", 22, 9600, 9899), ("santo andre", 20, 9000, 9299),
           ("osasco", 18, 6000, 6299), ("santos", 17, 11000, 11099), ("sorocaba", 16, 18000, 18109),
           ("ribeirao preto", 16, 14000, 14114), ("sao jose dos campos", 16, 12200, 12248),
           ("jundiai", 13, 13200, 13219), ("piracicaba", 10, 13400, 13428),
           ("mogi das cruzes", 10, 8700, 8899), ("barueri", 9, 6400, 6499), ("bauru", 9, 17000, 17099),
           ("sao jose do rio preto", 10, 15000, 15099), ("taubate", 7, 12000, 12119),
           ("franca", 6, 14400, 14414), ("limeira", 6, 13480, 13489), ("americana", 6, 13465, 13479),
           ("indaiatuba", 6, 13330, 13349), ("praia grande", 7, 11700, 11729),
           ("sao carlos", 6, 13560, 13577), ("marilia", 5, 17500, 17529),
           ("presidente prudente", 5, 19000, 19069), ("diadema", 7, 9900, 9999),
           ("carapicuiba", 6, 6300, 6399), ("cotia", 6, 6700, 6729), ("ibitinga", 3, 14940, 14940),
           ("santa barbara d'oeste", 6, 13450, 13459), ("estrela d'oeste", 2, 15650, 15650),
           ("palmeira d'oeste", 2, 15720, 15720)],
    "TO": [("palmas", 55, 77000, 77299), ("araguaina", 25, 77800, 77829), ("gurupi", 20, 77400, 77439)],
}

# (Olist name, Olist English translation, Olist item count, price factor, weight factor). These are the
# 71 categories that Olist's translation table covers, English spellings ("home_confort") included.
_CATEGORIES: tuple[tuple[str, str, int, float, float], ...] = (
    ("cama_mesa_banho", "bed_bath_table", 11115, 0.85, 1.3),
    ("beleza_saude", "health_beauty", 9670, 1.1, 0.6),
    ("esporte_lazer", "sports_leisure", 8641, 1.0, 1.0),
    ("moveis_decoracao", "furniture_decor", 8334, 0.9, 2.0),
    ("informatica_acessorios", "computers_accessories", 7827, 1.05, 0.8),
    ("utilidades_domesticas", "housewares", 6964, 0.85, 1.5),
    ("relogios_presentes", "watches_gifts", 5991, 1.9, 0.4),
    ("telefonia", "telephony", 4545, 0.55, 0.3),
    ("ferramentas_jardim", "garden_tools", 4347, 1.0, 1.5),
    ("automotivo", "auto", 4235, 1.0, 1.2),
    ("brinquedos", "toys", 4117, 1.0, 1.0),
    ("cool_stuff", "cool_stuff", 3796, 1.4, 1.5),
    ("perfumaria", "perfumery", 3419, 1.1, 0.5),
    ("bebes", "baby", 3065, 1.3, 1.3),
    ("eletronicos", "electronics", 2767, 0.7, 0.4),
    ("papelaria", "stationery", 2517, 0.9, 0.8),
    ("fashion_bolsas_e_acessorios", "fashion_bags_accessories", 2031, 0.8, 0.4),
    ("pet_shop", "pet_shop", 1947, 1.0, 1.3),
    ("moveis_escritorio", "office_furniture", 1691, 1.7, 6.0),
    ("consoles_games", "consoles_games", 1137, 1.4, 0.6),
    ("malas_acessorios", "luggage_accessories", 1092, 1.6, 2.5),
    ("construcao_ferramentas_construcao", "construction_tools_construction", 929, 1.5, 2.0),
    ("eletrodomesticos", "home_appliances", 771, 1.3, 2.0),
    ("instrumentos_musicais", "musical_instruments", 680, 2.3, 1.8),
    ("eletroportateis", "small_appliances", 679, 2.5, 2.2),
    ("casa_construcao", "home_construction", 604, 1.3, 1.8),
    ("livros_interesse_geral", "books_general_interest", 553, 0.8, 0.6),
    ("alimentos", "food", 510, 0.6, 0.8),
    ("moveis_sala", "furniture_living_room", 503, 1.5, 3.5),
    ("casa_conforto", "home_confort", 434, 1.3, 1.5),
    ("bebidas", "drinks", 379, 0.8, 1.3),
    ("audio", "audio", 364, 1.5, 0.5),
    ("market_place", "market_place", 311, 1.4, 1.0),
    ("construcao_ferramentas_iluminacao", "construction_tools_lights", 304, 1.3, 0.8),
    ("climatizacao", "air_conditioning", 297, 2.0, 2.5),
    ("moveis_cozinha_area_de_servico_jantar_e_jardim", "kitchen_dining_laundry_garden_furniture", 281,
     1.8, 4.0),
    ("alimentos_bebidas", "food_drink", 278, 0.7, 0.8),
    ("industria_comercio_e_negocios", "industry_commerce_and_business", 268, 2.0, 2.5),
    ("livros_tecnicos", "books_technical", 267, 1.1, 0.8),
    ("telefonia_fixa", "fixed_telephony", 264, 2.0, 0.6),
    ("fashion_calcados", "fashion_shoes", 262, 1.3, 0.8),
    ("eletrodomesticos_2", "home_appliances_2", 238, 5.0, 5.0),
    ("construcao_ferramentas_jardim", "costruction_tools_garden", 238, 1.3, 1.5),
    ("agro_industria_e_comercio", "agro_industry_and_commerce", 212, 3.0, 2.5),
    ("artes", "art", 209, 1.4, 1.0),
    ("pcs", "computers", 203, 10.0, 3.0),
    ("sinalizacao_e_seguranca", "signaling_and_security", 199, 1.4, 1.5),
    ("construcao_ferramentas_seguranca", "construction_tools_safety", 194, 2.0, 1.0),
    ("artigos_de_natal", "christmas_supplies", 153, 0.8, 0.8),
    ("fashion_roupa_masculina", "fashion_male_clothing", 132, 1.4, 0.4),
    ("fashion_underwear_e_moda_praia", "fashion_underwear_beach", 131, 0.9, 0.3),
    ("moveis_quarto", "furniture_bedroom", 109, 1.5, 3.0),
    ("construcao_ferramentas_ferramentas", "costruction_tools_tools", 103, 1.7, 1.5),
    ("tablets_impressao_imagem", "tablets_printing_image", 83, 1.2, 0.5),
    ("portateis_casa_forno_e_cafe", "small_appliances_home_oven_and_coffee", 76, 5.0, 2.5),
    ("cine_foto", "cine_photo", 72, 1.1, 0.6),
    ("dvds_blu_ray", "dvds_blu_ray", 64, 1.0, 0.4),
    ("livros_importados", "books_imported", 60, 1.0, 0.6),
    ("fashion_roupa_feminina", "fashio_female_clothing", 48, 0.8, 0.4),
    ("artigos_de_festas", "party_supplies", 43, 1.2, 0.8),
    ("fraldas_higiene", "diapers_and_hygiene", 39, 0.7, 2.0),
    ("moveis_colchao_e_estofado", "furniture_mattress_and_upholstery", 38, 1.8, 5.0),
    ("musica", "music", 38, 1.7, 1.0),
    ("flores", "flowers", 33, 0.5, 0.5),
    ("casa_conforto_2", "home_comfort_2", 30, 0.4, 1.0),
    ("fashion_esporte", "fashion_sport", 30, 0.7, 0.4),
    ("artes_e_artesanato", "arts_and_craftmanship", 24, 1.1, 0.8),
    ("la_cuisine", "la_cuisine", 14, 2.0, 1.5),
    ("cds_dvds_musicais", "cds_dvds_musicals", 14, 0.6, 0.3),
    ("fashion_roupa_infanto_juvenil", "fashion_childrens_clothes", 8, 0.8, 0.3),
    ("seguros_e_servicos", "security_and_services", 2, 2.0, 0.5),
)
_EMPTY_CATEGORY_SHARE = 0.015  # of products (and about the same of items)

# Olist's orders per purchase month, used as relative weights: a trickle in 2016, the 2017 ramp-up, the
# 2018 plateau and a near-empty Sept-Oct 2018 tail. The four edge months are raised from Olist's 4/1/16/4
# so that a scale-1 dataset still spans the whole 2016-09-04 .. 2018-10-17 window.
_MONTH_ORDERS: dict[tuple[int, int], int] = {
    (2016, 9): 30, (2016, 10): 324, (2016, 12): 10,
    (2017, 1): 800, (2017, 2): 1780, (2017, 3): 2682, (2017, 4): 2404, (2017, 5): 3700, (2017, 6): 3245,
    (2017, 7): 4026, (2017, 8): 4331, (2017, 9): 4285, (2017, 10): 4631, (2017, 11): 7544,
    (2017, 12): 5673, (2018, 1): 7269, (2018, 2): 6728, (2018, 3): 7211, (2018, 4): 6939,
    (2018, 5): 6873, (2018, 6): 6167, (2018, 7): 6292, (2018, 8): 6512, (2018, 9): 40, (2018, 10): 30,
}
# Share of purchases per hour of day (Olist: quiet before dawn, busy 10:00-22:00).
_HOUR_WEIGHTS = (2.4, 1.2, 0.5, 0.3, 0.2, 0.2, 0.5, 1.2, 3.0, 4.8, 6.2, 6.6,
                 6.0, 6.5, 6.7, 6.5, 6.7, 6.2, 5.9, 6.0, 6.2, 6.2, 5.8, 4.2)

_STATUS_WEIGHTS = {
    "delivered": 96.95, "shipped": 1.1, "canceled": 0.65, "unavailable": 0.6, "invoiced": 0.32,
    "processing": 0.3, "created": 0.05, "approved": 0.03,
}
_ITEM_COUNT_WEIGHTS = {1: 90.0, 2: 7.0, 3: 1.77, 4: 0.69, 5: 0.27, 6: 0.27}
# Weights of an order's main payment type; vouchers also appear as extra rows of split payments, which
# brings every type's share of payment rows close to Olist's (74 / 19 / 5.5 / 1.5 %).
_PRIMARY_PAYMENT_WEIGHTS = {"credit_card": 76.5, "boleto": 19.7, "voucher": 2.0, "debit_card": 1.55}
# Olist's credit card installments 1..24 (1 is half of them; 10 is a bump).
_INSTALLMENT_WEIGHTS = (25455, 12413, 10461, 7098, 5239, 3920, 1626, 4268, 644, 5328, 23, 133,
                        16, 15, 74, 5, 8, 27, 0, 17, 3, 1, 1, 18)

# Score weights (1..5 stars) by what happened to the order.
_SCORE_WEIGHTS = {
    "on_time": (8.0, 2.2, 7.8, 20.5, 61.5),
    "late_1": (20.0, 5.0, 11.0, 20.0, 44.0),
    "late": (45.0, 8.0, 12.0, 12.0, 23.0),
    "outlier": (70.0, 8.0, 8.0, 5.0, 9.0),
    "open": (55.0, 10.0, 12.0, 8.0, 15.0),
    "failed": (65.0, 10.0, 8.0, 5.0, 12.0),
}
_MESSAGE_P = (0.70, 0.65, 0.50, 0.30, 0.30)  # chance of a comment message, by score 1..5
_EMAIL_P = (0.15, 0.12, 0.04, 0.015, 0.008)  # chance the message carries a contact e-mail, by score

_TITLES = {
    "neg": ("Não recebi", "Péssimo", "Ruim", "Produto com defeito", "Decepcionado", "Não recomendo"),
    "mid": ("Razoável", "Ok", "Regular", "Mais ou menos", "Bom, mas demorou"),
    "pos": ("Recomendo", "Ótimo", "Super recomendo", "Excelente", "Muito bom", "Perfeito", "Nota 10"),
}
# No text here contains '@': the only '@' in a message is a contact e-mail (the privacy rule's target).
_MESSAGES = {
    "neg": (
        "Não recebi o produto até agora.",
        "Produto veio com defeito, quero trocar.",
        "Comprei 2 unidades e recebi apenas 1.",
        "Péssimo atendimento, ninguém responde.",
        "O produto não corresponde à descrição.",
        "Veio quebrado. Decepcionada!",
        "Até agora nada, o prazo já passou.",
        'Recebi um produto diferente do que comprei, "absurdo".',
        "Pedido cancelado sem nenhuma explicação.",
        "A boia da caixa d'água veio sem a rosca, não serve.",
        "Muito demorado, não compro mais nessa loja.",
    ),
    "mid": (
        "Produto ok, mas demorou um pouco para chegar.",
        "Razoável. Esperava um material melhor.",
        "A cor é diferente da foto, mas serve.",
        "Chegou, porém faltou o manual de instruções.",
        "Produto bom, entrega demorada.",
        'O tamanho é menor do que o "anunciado".',
    ),
    "pos": (
        "Recebi bem antes do prazo estipulado.",
        "Produto de ótima qualidade, recomendo!",
        "Chegou antes do prazo, tudo certo.",
        "Muito bom, exatamente como na descrição.",
        "Entrega rápida e produto bem embalado.",
        "Adorei o produto, superou as expectativas.",
        "Ótimo custo-benefício.",
        'Veio certinho, "nota 10".',
        "Tudo ok, recomendo a loja.",
        "Comprei a boia para a caixa d'água e funcionou perfeitamente.",
        "Minha filha amou, obrigada!",
    ),
}
_EMAIL_MESSAGES = {
    "neg": (
        "Não recebi o produto, me respondam no email {email}",
        "Quero o reembolso. Entrem em contato pelo e-mail {email}",
        "Produto com defeito, aguardo retorno em {email}",
        "Até hoje nada. Meu email: {email}, por favor respondam.",
    ),
    "mid": ("Gostaria de trocar o produto, contato {email}", "Faltou uma peça, me chamem no {email}"),
    "pos": ("Gostei muito, quero comprar mais unidades. Falem comigo: {email}",),
}
_FIRST_NAMES = ("joao", "maria", "ana", "pedro", "lucas", "juliana", "carlos", "fernanda", "rafael",
                "camila", "marcos", "patricia", "bruno", "aline", "gabriel", "larissa", "rodrigo",
                "beatriz", "thiago", "vanessa")
_LAST_NAMES = ("silva", "santos", "oliveira", "souza", "lima", "pereira", "costa", "ferreira", "almeida",
               "rodrigues", "gomes", "ribeiro", "carvalho", "martins", "araujo")
_EMAIL_DOMAINS = ("gmail.com", "gmail.com", "gmail.com", "hotmail.com", "hotmail.com", "yahoo.com.br",
                  "outlook.com", "uol.com.br", "bol.com.br", "terra.com.br")

# ---------------------------------------------------------------------------------------------------
# Time: whole seconds since 2016-01-01 00:00:00 (naive local time, like Olist's timestamps)
# ---------------------------------------------------------------------------------------------------

_EPOCH = date(2016, 1, 1)
_DAY = 86_400


def _day(y: int, m: int, d: int) -> int:
    return (date(y, m, d) - _EPOCH).days


_FIRST_DAY = _day(2016, 9, 4)
_LAST_DAY = _day(2018, 10, 17)
_CUTOFF = (_LAST_DAY + 1) * _DAY  # the snapshot ends here: later deliveries have not happened yet
_LATE_TAIL_START = _day(2018, 9, 1)  # Olist's last weeks are almost only canceled orders
_DATE_STR: dict[int, str] = {}


def _date_str(day: int) -> str:
    s = _DATE_STR.get(day)
    if s is None:
        s = _DATE_STR[day] = (_EPOCH + timedelta(days=day)).isoformat()
    return s


def _ts(sec: int) -> str:
    day, rest = divmod(sec, _DAY)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{_date_str(day)} {h:02d}:{m:02d}:{s:02d}"


def _late_period_factor(day: int) -> float:
    """Olist's late deliveries cluster after Black Friday 2017 and in Feb-Mar 2018."""
    if _day(2017, 11, 20) <= day <= _day(2017, 12, 15) or _day(2018, 2, 10) <= day <= _day(2018, 3, 25):
        return 1.8
    return 0.88  # keeps the overall late share at the per-state rates


# ---------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------


def _md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def _allocate(total: int, weights: Sequence[float]) -> list[int]:
    """Split ``total`` into integer parts proportional to ``weights`` (largest remainder)."""
    s = sum(weights)
    quotas = [total * w / s for w in weights]
    parts = [int(q) for q in quotas]
    by_remainder = sorted(range(len(weights)), key=lambda i: (parts[i] - quotas[i], i))
    for i in by_remainder[: total - sum(parts)]:
        parts[i] += 1
    return parts


def _distance_class(a: str, b: str) -> int:
    if a == b:
        return 0
    ra, rb = _STATES[a][2], _STATES[b][2]
    if ra == rb:
        return 1
    return 2 if (ra, rb) in _NEAR_REGIONS or (rb, ra) in _NEAR_REGIONS else 3


_CITY_PICKERS = {st: Weighted(cities, [c[1] for c in cities]) for st, cities in _CITIES.items()}


def _pick_place(rng: random.Random, state: str) -> tuple[str, str]:
    city, _, lo, hi = _CITY_PICKERS[state].pick(rng)
    return city, f"{rng.randint(lo, hi):05d}"


def _purchase_day_picker() -> Weighted:
    """Purchase days weighted so each month gets its Olist share; Black Friday 2017 is 5.5 ordinary days."""
    days = range(_FIRST_DAY, _LAST_DAY + 1)
    months = [((_EPOCH + timedelta(days=d)).year, (_EPOCH + timedelta(days=d)).month) for d in days]
    raw = [5.5 if d == _day(2017, 11, 24) else 1.0 for d in days]
    month_total: dict[tuple[int, int], float] = {}
    for month, w in zip(months, raw, strict=True):
        month_total[month] = month_total.get(month, 0.0) + w
    weights = [w * _MONTH_ORDERS.get(m, 0) / month_total[m] for m, w in zip(months, raw, strict=True)]
    return Weighted(days, weights)


# ---------------------------------------------------------------------------------------------------
# Entities
# ---------------------------------------------------------------------------------------------------


@dataclass
class _Seller:
    seller_id: str
    state: str
    city: str
    zip_prefix: str


@dataclass
class _Product:
    product_id: str
    category: str
    seller: _Seller
    price_cents: int
    weight_g: int


def _make_sellers(rng: random.Random, seed: int, n: int) -> tuple[list[_Seller], list[float]]:
    state_pick = Weighted(list(_STATES), [v[1] for v in _STATES.values()])
    sellers, volume = [], []
    for i in range(n):
        state = state_pick.pick(rng)
        city, zip_prefix = _pick_place(rng, state)
        sellers.append(_Seller(_md5(f"dptool-olist/{seed}/seller/{i}"), state, city, zip_prefix))
        # Log-normal sales weights give the long tail: a few big sellers, many small ones.
        volume.append(rng.lognormvariate(0.0, 1.1))
    return sellers, volume


def _product_price(rng: random.Random, factor: float) -> int:
    """Log-normal price (median ~75 BRL), often ending in .90/.99 like shop prices."""
    price = _clamp(rng.lognormvariate(math.log(72.0), 0.95) * factor, 0.85, 6735.0)
    r = rng.random()
    if price < 10 or r < 0.3:
        return max(85, round(price * 100))
    base = int(price) * 100
    return base + 90 if r < 0.6 else base + 99 if r < 0.85 else base


def _make_products(rng: random.Random, seed: int, n: int, sellers: list[_Seller], seller_volume: list[float],
                   emit: Emit):
    """Products with category, seller, price and dimensions; emits their rows, returns (products, category picks)."""
    names = [c[0] for c in _CATEGORIES] + [""]
    item_weights = [float(c[2]) for c in _CATEGORIES]
    item_weights.append(sum(item_weights) * _EMPTY_CATEGORY_SHARE / (1 - _EMPTY_CATEGORY_SHARE))
    # Products per category follow the category's sales; with room enough, every category gets one.
    if n >= 10 * len(names):
        counts = [c + 1 for c in _allocate(n - len(names), item_weights)]
    else:
        counts = _allocate(n, item_weights)
    labels = [i for i, c in enumerate(counts) for _ in range(c)]
    rng.shuffle(labels)

    seller_pick = Weighted(sellers, seller_volume)
    # The first products cover every seller once, so each seller has something to sell.
    covering = list(sellers)
    rng.shuffle(covering)
    photo_pick = Weighted(range(1, 11), (50, 20, 11, 8, 5, 3, 1.2, 0.8, 0.5, 0.5))

    products = []
    by_category: list[list[tuple[_Product, float]]] = [[] for _ in names]
    for i, cat_index in enumerate(labels):
        cat = names[cat_index]
        price_factor, weight_factor = _CATEGORIES[cat_index][3:] if cat else (1.0, 1.0)
        seller = covering[i] if i < len(covering) else seller_pick.pick(rng)
        weight = _clamp(rng.lognormvariate(math.log(700.0 * weight_factor), 1.15), 50, 40000)
        if weight >= 200 and rng.random() < 0.6:
            weight = round(weight / 50) * 50  # sellers often type round weights
        weight = int(weight)
        # Box dimensions from a plausible volume for the weight.
        volume = weight * rng.uniform(3.0, 9.0) + 1500
        side = volume ** (1 / 3)
        length = int(_clamp(side * rng.uniform(1.0, 1.6), 16, 105))
        width = int(_clamp(side * rng.uniform(0.7, 1.2), 11, 118))
        height = int(_clamp(volume / (length * width), 2, 105))
        product = _Product(_md5(f"dptool-olist/{seed}/product/{i}"), cat, seller,
                           _product_price(rng, price_factor), weight)
        products.append(product)
        by_category[cat_index].append((product, rng.lognormvariate(0.0, 1.1)))
        if cat:
            text = (str(int(_clamp(rng.gauss(48, 10), 5, 76))),
                    str(int(_clamp(rng.lognormvariate(math.log(600), 0.75), 4, 3992))),
                    str(photo_pick.pick(rng)))
        else:
            text = ("", "", "")  # Olist leaves these empty together with the category
        emit("olist_products_dataset", {
            "product_id": product.product_id, "product_category_name": cat,
            "product_name_lenght": text[0], "product_description_lenght": text[1],
            "product_photos_qty": text[2], "product_weight_g": str(weight),
            "product_length_cm": str(length), "product_height_cm": str(height),
            "product_width_cm": str(width),
        })

    # Sales pick a category by its Olist weight, then a product by its own (skewed) popularity.
    pickers = [Weighted([p for p, _ in ps], [w for _, w in ps]) for ps in by_category if ps]
    category_pick = Weighted(pickers, [w for w, ps in zip(item_weights, by_category, strict=True) if ps])
    return products, category_pick


# ---------------------------------------------------------------------------------------------------
# Orders
# ---------------------------------------------------------------------------------------------------


def _approval_lag(rng: random.Random, payment_type: str) -> int:
    """Seconds from purchase to approval: boleto waits for the bank (1-3 days), cards mostly minutes."""
    if rng.random() < (0.7 if payment_type == "boleto" else 0.03):
        return rng.randrange(_DAY, 3 * _DAY)
    if rng.random() < 0.65:
        return rng.randrange(600, 3600)
    return rng.randrange(3600, _DAY)


def _delivery(rng: random.Random, state: str, purchase: int, approved: int, est_day: int) -> tuple[int, str]:
    """Delivery second and its outcome class (on_time / late_1 / late / outlier)."""
    mean_days, late_share = _STATES[state][3], _STATES[state][4]
    earliest = approved + _DAY
    if rng.random() < 0.0038 and purchase + 62 * _DAY < _CUTOFF:
        # Outliers: lost parcels found weeks later, 60-200 days after purchase (before the snapshot).
        days = 61 + min(139.0, rng.expovariate(1 / 30), (_CUTOFF - purchase) / _DAY - 62)
        return max(purchase + int(days * _DAY), (est_day + 2) * _DAY + rng.randrange(_DAY)), "outlier"
    p_late = 0.95 * late_share * _late_period_factor(purchase // _DAY)
    u = rng.random()
    if u < 0.35 * p_late:
        # Exactly one calendar day after the promised date (what a one-day grace period forgives).
        return (est_day + 1) * _DAY + rng.randrange(7 * 3600, 22 * 3600), "late_1"
    if u < p_late:
        day = min(est_day + 2 + int(rng.expovariate(1 / 6)), purchase // _DAY + 59)
        return max(day, est_day + 2) * _DAY + rng.randrange(7 * 3600, 22 * 3600), "late"
    # On time: log-normal around the state's mean, by the end of the promised day.
    sigma = 0.5
    mu = math.log(0.9 * mean_days) - sigma * sigma / 2  # 0.9: the late tail adds the rest of the mean
    latest = (est_day + 1) * _DAY - 1
    for _ in range(6):
        sec = purchase + int(rng.lognormvariate(mu, sigma) * _DAY)
        if earliest <= sec <= latest:
            return sec, "on_time"
    return rng.randint(earliest, latest), "on_time"


def _split_payment(rng: random.Random, total: int, primary: str, n_rows: int) -> list[tuple[str, int]]:
    """Vouchers first, the main type pays the rest; values add up to ``total`` cents exactly."""
    parts: list[tuple[str, int]] = []
    left = total
    for _ in range(n_rows - 1):
        value = rng.choice((500, 1000, 1500, 2000, 2500, 3000, 5000))
        if value >= left * 0.8:
            value = max(1, int(left * rng.uniform(0.1, 0.5)))
        parts.append(("voucher", value))
        left -= value
    parts.append((primary, left))
    return parts


def _review_text(rng: random.Random, score: int) -> tuple[str, str]:
    mood = "neg" if score <= 2 else "mid" if score == 3 else "pos"
    if rng.random() < _EMAIL_P[score - 1]:
        sep = rng.choice((".", "_", ""))
        tail = rng.choice(("", "", str(rng.randint(1, 99)), str(rng.randint(1970, 2001))))
        email = f"{rng.choice(_FIRST_NAMES)}{sep}{rng.choice(_LAST_NAMES)}{tail}@{rng.choice(_EMAIL_DOMAINS)}"
        message = rng.choice(_EMAIL_MESSAGES[mood]).format(email=email)
    elif rng.random() < _MESSAGE_P[score - 1]:
        message = rng.choice(_MESSAGES[mood])
    else:
        message = ""
    # Titles are rarer than messages in Olist and come mostly with a message.
    title = rng.choice(_TITLES[mood]) if rng.random() < (0.3 if message else 0.03) else ""
    return title, message


def generate(scale: float = 1.0, seed: int = 42) -> dict[str, list[dict]]:
    """Rows per seed table; scale 1.0 = about 10,000 orders.

    Every value is the text written to the CSV (``""`` is NULL), so the rows equal what
    ``csv.DictReader`` reads back from :func:`write_csvs`' files.
    """
    tables: dict[str, list[dict]] = {name: [] for name in TABLES}
    _generate(scale, seed, lambda table, row: tables[table].append(row))
    return tables


def _generate(scale: float, seed: int, emit: Emit) -> None:
    """Hand every row to `emit(table, row)` as it is drawn: each table's rows in file order."""
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale!r}")
    rng = random.Random(seed)
    n_orders = max(1, round(10_000 * scale))
    n_sellers = max(1, round(300 * scale))
    n_products = max(1, round(3_000 * scale))

    sellers, seller_volume = _make_sellers(rng, seed, n_sellers)
    products, category_pick = _make_products(rng, seed, n_products, sellers, seller_volume, emit)

    # --- customers: one customer_id per order; ~3% of people come back (same customer_unique_id).
    day_pick = _purchase_day_picker()
    hour_pick = Weighted(range(24), _HOUR_WEIGHTS)
    purchases = [day_pick.pick(rng) * _DAY + hour_pick.pick(rng) * 3600 + rng.randrange(3600)
                 for _ in range(n_orders)]
    returning = [i > 0 and rng.random() < 0.031 for i in range(n_orders)]
    n_people = returning.count(False)
    state_pick = Weighted(list(_STATES), [v[0] for v in _STATES.values()])
    states = [state_pick.pick(rng) for _ in range(n_people)]
    if n_people >= 1000:
        # Make sure every state and every apostrophe city appears, at a random place in the file.
        forced = [(st, None) for st in _STATES]
        forced += [(st, c) for st, cities in _CITIES.items() for c in cities if "'" in c[0]]
        places = [(st, (c[0], f"{rng.randint(c[2], c[3]):05d}")) if c else (st, _pick_place(rng, st))
                  for st, c in forced]
        places += [(st, _pick_place(rng, st)) for st in states[len(forced):]]
    else:
        places = [(st, _pick_place(rng, st)) for st in states]
    rng.shuffle(places)

    people: list[tuple[str, str, str, str]] = []  # (unique id, zip, city, state)
    order_state = []
    for i in range(n_orders):
        if returning[i]:
            person = people[rng.randrange(len(people))]
        else:
            state, (city, zip_prefix) = places[len(people)]
            person = (_md5(f"dptool-olist/{seed}/person/{len(people)}"), zip_prefix, city, state)
            people.append(person)
        emit("olist_customers_dataset", {
            "customer_id": _md5(f"dptool-olist/{seed}/customer/{i}"), "customer_unique_id": person[0],
            "customer_zip_code_prefix": person[1], "customer_city": person[2], "customer_state": person[3],
        })
        order_state.append(person[3])

    # --- status, payment type and basket size per order.
    status_pick = weighted(_STATUS_WEIGHTS)
    payment_pick = weighted(_PRIMARY_PAYMENT_WEIGHTS)
    count_pick = weighted(_ITEM_COUNT_WEIGHTS)
    plans = []
    for i in range(n_orders):
        if purchases[i] >= _LATE_TAIL_START * _DAY:
            status = "canceled" if rng.random() < 0.85 else "shipped"
        else:
            status = status_pick.pick(rng)
        has_approval = not (status == "created" or (status == "canceled" and rng.random() < 0.2))
        if status == "canceled":
            # An abandoned checkout: "not_defined" placeholder payment, no items.
            abandoned = rng.random() < (0.5 if has_approval else 0.95)
            payment = "not_defined" if abandoned else payment_pick.pick(rng)
        elif status == "unavailable":
            payment = "not_defined" if rng.random() < 0.3 else payment_pick.pick(rng)
        elif status == "created":
            payment = "boleto"  # waiting for the bank slip to be paid
        else:
            payment = payment_pick.pick(rng)
        n_items = 0 if status == "unavailable" or payment == "not_defined" else count_pick.pick(rng)
        # A second item is often another unit of the same product (Olist repeats the row).
        repeats = [k > 0 and rng.random() < 0.55 for k in range(n_items)]
        plans.append((status, has_approval, payment, repeats))

    # Every product sells at least once (Olist's product table only has sold products).
    n_fresh = sum(r.count(False) for *_, r in plans)
    picks = list(products) if n_fresh >= len(products) else []
    picks += [category_pick.pick(rng).pick(rng) for _ in range(n_fresh - len(picks))]
    rng.shuffle(picks)
    next_pick = iter(picks)

    installment_pick = Weighted(range(1, 25), _INSTALLMENT_WEIGHTS)
    score_picks = {k: Weighted(range(1, 6), w) for k, w in _SCORE_WEIGHTS.items()}
    for i in range(n_orders):
        status, has_approval, payment, repeats = plans[i]
        state = order_state[i]
        order_id = _md5(f"dptool-olist/{seed}/order/{i}")
        purchase = purchases[i]
        purchase_day = purchase // _DAY
        est_day = purchase_day + round(_STATES[state][3]) + rng.randint(8, 15)
        approved = purchase + _approval_lag(rng, payment) if has_approval else None

        carrier = delivered = None
        outcome = "failed" if status in ("canceled", "unavailable") else "open"
        if status == "delivered":
            delivered, outcome = _delivery(rng, state, purchase, approved, est_day)
            if delivered >= _CUTOFF:
                status, delivered, outcome = "shipped", None, "open"  # still on its way at the snapshot
        carrier_lag = int(rng.lognormvariate(math.log(2 * _DAY), 0.6))
        if delivered is not None:
            carrier = approved + max(3600, min(carrier_lag, int(0.6 * (delivered - approved))))
        elif status == "shipped" or (status == "canceled" and repeats and approved and rng.random() < 0.15):
            carrier = approved + max(3600, carrier_lag)

        emit("olist_orders_dataset", {
            "order_id": order_id, "customer_id": _md5(f"dptool-olist/{seed}/customer/{i}"), "order_status": status,
            "order_purchase_timestamp": _ts(purchase),
            "order_approved_at": _ts(approved) if approved is not None else "",
            "order_delivered_carrier_date": _ts(carrier) if carrier is not None else "",
            "order_delivered_customer_date": _ts(delivered) if delivered is not None else "",
            "order_estimated_delivery_date": f"{_date_str(est_day)} 00:00:00",
        })

        # --- items: price from the product, freight from weight and distance.
        total = 0
        # Sellers must hand the parcel to the carrier within ~6 days of approval.
        limit_start = approved if approved is not None else purchase
        limit = _ts(limit_start + 6 * _DAY + rng.randrange(-6 * 3600, 6 * 3600))
        product = None
        for k, repeat in enumerate(repeats):
            if not repeat:
                product = next(next_pick)
            kg = product.weight_g / 1000
            freight = (8.5, 12.5, 16.5, 23.0)[_distance_class(product.seller.state, state)] + 2.5 * kg ** 0.85
            freight_cents = round(_clamp(freight * rng.uniform(0.85, 1.15), 7.0, 60.0) * 100)
            total += product.price_cents + freight_cents
            emit("olist_order_items_dataset", {
                "order_id": order_id, "order_item_id": str(k + 1), "product_id": product.product_id,
                "seller_id": product.seller.seller_id, "shipping_limit_date": limit,
                "price": _money(product.price_cents), "freight_value": _money(freight_cents),
            })

        # --- payments: sum to the items; split into vouchers + main type for ~3% of orders.
        if payment == "not_defined":
            parts = [("not_defined", 0)]
        else:
            if not repeats:  # charged before the order turned out unavailable
                total = max(85, int(rng.lognormvariate(math.log(7500), 0.85))) + rng.randint(700, 3000)
            n_rows = 1
            if rng.random() < 0.03:
                n_rows = 2 if rng.random() < 0.8 else 3
            parts = _split_payment(rng, total, payment, n_rows)
        for seq, (ptype, value) in enumerate(parts, start=1):
            installments = installment_pick.pick(rng) if ptype == "credit_card" else 1
            emit("olist_order_payments_dataset", {
                "order_id": order_id, "payment_sequential": str(seq), "payment_type": ptype,
                "payment_installments": str(installments), "payment_value": _money(value),
            })

        # --- review: ~99% of orders have exactly one.
        if rng.random() < 0.992:
            score = score_picks[outcome].pick(rng)
            title, message = _review_text(rng, score)
            base_day = delivered // _DAY if delivered is not None else est_day
            created = (base_day + rng.randint(0, 1)) * _DAY
            emit("olist_order_reviews_dataset", {
                "review_id": _md5(f"dptool-olist/{seed}/review/{i}"), "order_id": order_id,
                "review_score": str(score), "review_comment_title": title, "review_comment_message": message,
                "review_creation_date": _ts(created),
                "review_answer_timestamp": _ts(created + _DAY + rng.randrange(3 * _DAY)),
            })

    for s in sellers:
        emit("olist_sellers_dataset", {"seller_id": s.seller_id, "seller_zip_code_prefix": s.zip_prefix,
                                       "seller_city": s.city, "seller_state": s.state})
    for c in _CATEGORIES:
        emit("olist_product_category_name_translation",
             {"product_category_name": c[0], "product_category_name_english": c[1]})


def write_csvs(out_dir: str | Path, scale: float = 1.0, seed: int = 42) -> dict[str, int]:
    """Write one CSV per table (header row, UTF-8, '\\n' line endings, csv module quoting minimal).

    Returns the row count per table.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with CsvSink(out, {name: (f"{name}.csv", COLUMNS[name]) for name in TABLES}) as sink:
        _generate(scale, seed, sink.emit)
    return sink.counts
